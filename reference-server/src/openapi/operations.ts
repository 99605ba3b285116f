import { PORTAL_OPERATIONS } from '../portal/portal-operations.ts';
import { API_OPERATIONS } from '../routes/api-operations.ts';
import { type DocumentedOperation, describeOperation } from '../routes/operation.ts';

/**
 * Every operation the OpenAPI document describes, from the tables they are mounted from: the API's
 * (`routes/api-operations.ts`) and the developer portal's pages and forms (`portal/portal-operations.ts`).
 *
 * @example
 * OPERATIONS.find((operation) => operation.operationId === 'createSession')?.body?.name; // 'CreateSessionParams'
 */
export const OPERATIONS: readonly DocumentedOperation[] = [...API_OPERATIONS, ...PORTAL_OPERATIONS].map(
  describeOperation,
);
