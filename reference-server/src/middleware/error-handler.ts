import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { HttpError } from '../errors.ts';
import type { Logger } from '../internal/logger.ts';
import { API_WORDS, classifyError, type ErrorWords } from './classify-error.ts';
import { sendError } from './envelope.ts';
import { requestIdOf } from './request-context.ts';

/** How an edge's errors are answered: their words, and how an answer is written (the envelope, or a page). */
export interface ErrorAnswers {
  logger: Logger;
  /** Told of each write that found the disk full, so that `/health` answers 503 too. */
  onStorageFull?: (error: unknown) => void;
  words?: ErrorWords;
  /** Writes the answer (the JSON envelope by default; the portal's error page). */
  answer?: (res: Response, error: HttpError) => void;
}

const LOGGED = {
  'storage-full': 'write refused: no space left',
  'database-unavailable': 'database unavailable',
  internal: 'unhandled error',
} as const;

/**
 * The one place errors become responses, for the API (JSON) and the portal (HTML) alike: `classifyError`
 * decides the status, code and message; a fault of the service is logged with the request id (never the
 * request itself); `answer` writes it. A full disk or an unreachable database answers 503 with `Retry-After`
 * on every edge.
 *
 * @example
 * app.use(errorHandler({ logger, onStorageFull: (error) => storageHealth.noteFailure(error) }));
 */
export function errorHandler(options: ErrorAnswers): ErrorRequestHandler {
  const { logger, onStorageFull = () => {}, words = API_WORDS, answer = sendError } = options;
  return (raised: unknown, req, res, _next) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const { error, fault } = classifyError(raised, words);
    if (fault?.kind === 'storage-full') onStorageFull(raised);
    if (fault) {
      logger[fault.level](LOGGED[fault.kind], {
        requestId: requestIdOf(res),
        method: req.method,
        route: req.route?.path,
        error: raised instanceof Error ? `${raised.name}: ${raised.message}` : String(raised),
      });
    }
    answer(res, error);
  };
}

export const routeNotFound: RequestHandler = (req, _res, next) => {
  next(new HttpError(404, 'route_not_found', `No route ${req.method} ${req.path}.`));
};
