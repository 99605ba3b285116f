import { isWidgetRoute } from '../middleware/cors.ts';
import { corsHeaders, header, type Json, pathParametersOf, ref, requestIdHeader } from './components.ts';

/**
 * Whether a path is a checkout route, which answers with CORS headers (`middleware/cors.ts` decides which routes
 * those are).
 *
 * @example
 * answersCorsAt('/api/widget/sessions/{id}/events'); // true
 */
export const answersCorsAt = (path: string): boolean => isWidgetRoute(path.replace(/\{[^}]+\}/g, 'x'));

/**
 * The CORS preflight of a checkout route, as `middleware/cors.ts` answers it before any route is reached (so it
 * is no entry of the table: it follows from the route being a checkout route). 204 with what a widget host may
 * send to the host's origin; 403 to any other origin. It spends no budget and reads no database.
 */
export function preflightOf(path: string, operationId: string): Json {
  return {
    operationId: `${operationId}Preflight`,
    summary: 'CORS preflight from a widget host',
    description:
      "Answered before the route: to the origin of a widget host (where the checkout frame runs), 204 with the methods and headers it may use; to any other origin, 403 `forbidden` (the browser then refuses the page's request).",
    tags: ['Checkout'],
    security: [],
    parameters: [
      ...pathParametersOf(path),
      {
        name: 'Origin',
        in: 'header',
        required: true,
        description: "The calling page's origin.",
        schema: { type: 'string', maxLength: 2048, pattern: '^[\\x21-\\x7e]+$' },
      },
      {
        name: 'Access-Control-Request-Method',
        in: 'header',
        required: false,
        description: 'The method the browser is asking about.',
        schema: { type: 'string', maxLength: 16, pattern: '^[A-Za-z]+$' },
      },
    ],
    responses: {
      '204': {
        description: 'The origin is a widget host: what it may send.',
        headers: {
          ...requestIdHeader,
          ...corsHeaders,
          'Access-Control-Allow-Methods': header('AccessControlAllowMethods'),
          'Access-Control-Allow-Headers': header('AccessControlAllowHeaders'),
          'Access-Control-Max-Age': header('AccessControlMaxAge'),
        },
      },
      '403': {
        description: 'The origin is not a widget host.',
        headers: { ...requestIdHeader, Vary: header('VaryOrigin') },
        content: { 'application/json': { schema: ref('Error') } },
      },
      default: {
        description: 'A fault of the service (500 internal_error), never a stack trace.',
        headers: requestIdHeader,
        content: { 'application/json': { schema: ref('Error') } },
      },
    },
  };
}
