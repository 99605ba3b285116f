import type { DocumentedOperation, HeaderSpec } from '../routes/operation.ts';
import { inline, type Json, pathParametersOf, ref, type SchemaComponents } from './components.ts';
import { responsesOf } from './responses.ts';

/** What an operation with `idempotency` reads (`middleware/idempotency.ts`). */
const idempotencyKey: HeaderSpec = {
  name: 'Idempotency-Key',
  description:
    'Same key, route and body within 24 h answers the first success again, byte for byte (Idempotent-Replayed: true); another body or route: 409 idempotency_key_reused.',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

function parametersOf(operation: DocumentedOperation): Json[] {
  const parameters: Json[] = pathParametersOf(operation.path);
  if (operation.query) {
    const schema = inline(operation.query) as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      parameters.push({
        name,
        in: 'query',
        required: schema.required?.includes(name) ?? false,
        schema: property,
      });
    }
  }
  const headers = [...(operation.headers ?? []), ...(operation.idempotency ? [idempotencyKey] : [])];
  for (const header of headers) {
    parameters.push({
      name: header.name,
      in: 'header',
      required: header.required,
      description: header.description,
      schema: header.schema,
    });
  }
  return parameters;
}

/**
 * The document's Operation Object of one operation: its id, summary, tag, security, parameters, request body
 * (a JSON body named in `components.schemas`, or a portal form inline) and responses.
 *
 * @example
 * paths['/api/refunds/{id}'].get = operationObject(describeOperation(retrieveRefund), schemas);
 */
export function operationObject(operation: DocumentedOperation, schemas: SchemaComponents): Json {
  const body: Json | undefined = operation.body
    ? {
        required: operation.body.required,
        content: { 'application/json': { schema: ref(operation.body.name) } },
      }
    : operation.form
      ? {
          required: true,
          content: { 'application/x-www-form-urlencoded': { schema: inline(operation.form) } },
        }
      : undefined;
  if (operation.body) schemas.input(operation.body.schema, operation.body.name);
  const parameters = parametersOf(operation);
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    tags: [operation.tag],
    security: operation.security.map((name) => ({ [name]: [] })),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: responsesOf(operation, schemas),
  };
}
