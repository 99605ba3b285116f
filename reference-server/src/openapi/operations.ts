import { API_OPERATIONS } from '../routes/api-operations.ts';
import { type DocumentedOperation, describeOperation } from '../routes/operation.ts';
import { PORTAL_OPERATIONS } from './portal-operations.ts';

/**
 * Every operation the OpenAPI document describes: the API's, from the table they are mounted from
 * (`routes/api-operations.ts`), and the developer portal's pages and forms.
 *
 * @example
 * OPERATIONS.find((operation) => operation.operationId === 'createSession')?.body?.name; // 'CreateSessionParams'
 */
export const OPERATIONS: readonly DocumentedOperation[] = [
  ...API_OPERATIONS.map(describeOperation),
  ...PORTAL_OPERATIONS,
];
