import { BANK_OPERATIONS } from './bank.ts';
import type { AnyOperation } from './operation.ts';
import { PAYMENT_LINK_OPERATIONS } from './payment-links.ts';
import { REFUND_OPERATIONS } from './refunds.ts';
import { SERVICE_OPERATIONS } from './service-operations.ts';
import { SESSION_EVENT_OPERATIONS } from './session-events.ts';
import { SESSION_OPERATIONS } from './sessions.ts';
import { TEST_HELPER_OPERATIONS } from './test-helpers.ts';
import { WEBHOOK_ENDPOINT_OPERATIONS } from './webhook-endpoints.ts';
import { WIDGET_OPERATIONS } from './widget.ts';

/**
 * Every operation of the API, each declared once with its method, path, auth, schemas, answers and handler:
 * `createApp` mounts exactly these (`mountOperations`) and the OpenAPI document is generated from them
 * (`openapi/openapi-document.ts`). To add an operation, add its entry to its group's table (reference-server's
 * README, "Adding an operation").
 *
 * @example
 * API_OPERATIONS.find((operation) => operation.operationId === 'retrieveRefund')?.auth; // 'secretKey'
 */
export const API_OPERATIONS: readonly AnyOperation[] = [
  ...SERVICE_OPERATIONS,
  ...SESSION_OPERATIONS,
  ...REFUND_OPERATIONS,
  ...PAYMENT_LINK_OPERATIONS,
  ...WIDGET_OPERATIONS,
  ...SESSION_EVENT_OPERATIONS,
  ...TEST_HELPER_OPERATIONS,
  ...BANK_OPERATIONS,
  ...WEBHOOK_ENDPOINT_OPERATIONS,
];
