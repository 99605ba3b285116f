import {
  BalanceSchema,
  BalanceTransactionSchema,
  ListBalanceTransactionsParamsSchema,
  RetrieveBalanceParamsSchema,
} from '@servicepay/node/protocol';
import { defineOperation, json } from './operation.ts';

/**
 * The merchant's API for its books (secret key, issue 37): the ledger's entries, one or a page, and the
 * balance per currency. Read-only: entries are written by the jobs that move the money. The `BalanceService`
 * is built once with the service's others (`createService`) and reached through the operation deps.
 *
 * @example
 * mountOperations(app, BALANCE_TRANSACTION_OPERATIONS, deps); // as createApp mounts every table
 */
export const BALANCE_TRANSACTION_OPERATIONS = [
  defineOperation({
    method: 'get',
    path: '/api/balance-transactions',
    operationId: 'listBalanceTransactions',
    tag: 'Balance',
    summary: "List the ledger of the key's environment, newest first",
    description:
      'Every movement of money, once: payments (+), refunds paid out (−), credits no session took (+) and their returns (−), transfers the bank returned on arrival (+ and −). Filters: `type`, `sessionId`, `createdFrom` (inclusive), `createdTo` (exclusive), ISO 8601 times; 400 when `createdTo` is not later than `createdFrom`.',
    auth: 'secretKey',
    query: ListBalanceTransactionsParamsSchema,
    success: {
      200: json('A page of balance transactions.', BalanceTransactionSchema, 'BalanceTransaction', true),
    },
    errors: [],
    handler: async ({ caller, query }, { balance }) => ({
      page: await balance.list(caller, query),
    }),
  }),
  defineOperation({
    method: 'get',
    path: '/api/balance-transactions/{id}',
    operationId: 'retrieveBalanceTransaction',
    tag: 'Balance',
    summary: 'Retrieve a balance transaction',
    auth: 'secretKey',
    query: RetrieveBalanceParamsSchema,
    success: { 200: json('The balance transaction.', BalanceTransactionSchema, 'BalanceTransaction') },
    errors: [404],
    handler: async ({ caller, params }, { balance }) => ({
      data: await balance.retrieve(caller, params.id),
    }),
  }),
  defineOperation({
    method: 'get',
    path: '/api/balance',
    operationId: 'retrieveBalance',
    tag: 'Balance',
    summary: "The balance of the key's environment, per currency",
    description:
      '`collected` (every movement in), `refunded` (refunds paid out), `returned` (money sent back without a refund) and `net` (`collected - refunded - returned`: what the bank holds for the business), in minor units, summed over the whole ledger.',
    auth: 'secretKey',
    query: RetrieveBalanceParamsSchema,
    success: { 200: json('The balance.', BalanceSchema, 'Balance') },
    errors: [],
    handler: async ({ caller }, { balance }) => ({ data: await balance.balance(caller) }),
  }),
];
