import type { RequestHandler } from 'express';
import { openApiDocument } from './openapi-document.ts';

/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of this server, generated from the protocol schemas.
 *
 * @example
 * app.get('/openapi.json', openApiRoute);
 */
export const openApiRoute: RequestHandler = (_req, res) => {
  res.json(openApiDocument());
};
