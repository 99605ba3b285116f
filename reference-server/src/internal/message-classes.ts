import { IncomingMessage, ServerResponse } from 'node:http';

/** What of an express app this needs: the objects it gives every request and response as their prototype. */
export interface ExpressPrototypes {
  request: object;
  response: object;
}

/** The request and response classes `http.createServer` makes its messages with (its options of these names). */
export interface MessageClasses {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
}

const classesMade = new WeakMap<ExpressPrototypes, MessageClasses>();

/**
 * Request and response classes whose instances are born with the express app's prototypes, so that express
 * no longer changes their prototype on arrival. Points `app.request` and `app.response` at these classes'
 * prototypes, which inherit from the app's own: every property and method express and the routes add to those
 * is still found.
 *
 * Why (issue 12): express calls `Object.setPrototypeOf(req, app.request)` (and the same for `res`) at the start
 * of every request. V8 gives an object whose prototype is changed a hidden class of its own, detached from the
 * shared ones, so every property set on it afterwards (by express, Node's HTTP code or ours) makes yet another
 * class only that object has. Each open push stream kept two such classes with their property tables (about
 * 2 KB of heap), and no property read of a request or a response could be optimised for a shape the requests
 * share. Setting a prototype an object already has does nothing in V8. Subclasses rather than plain functions:
 * V8 sizes a subclass's instances from its base constructor, so they keep Node's fields inside the object.
 *
 * @example
 * const app = express();
 * const server = createServer({ ...messageClassesFor(app) }, app);
 */
export function messageClassesFor(app: ExpressPrototypes): MessageClasses {
  // A second server for the same app gets the same classes, rather than a further level of prototypes.
  const made = classesMade.get(app);
  if (made) return made;
  class Request extends IncomingMessage {}
  class Response extends ServerResponse {}
  Object.setPrototypeOf(Request.prototype, app.request);
  Object.setPrototypeOf(Response.prototype, app.response);
  app.request = Request.prototype;
  app.response = Response.prototype;
  // Node makes a response with the request it answers; its generic parameter is left to Node.
  const classes = { IncomingMessage: Request, ServerResponse: Response as typeof ServerResponse };
  classesMade.set(app, classes);
  return classes;
}
