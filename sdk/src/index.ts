/**
 * `@servicepay/node`: the typed Node SDK for ServicePay.
 * The client lands with the SDK issue; today the package exports the wire contract.
 */
export * from './protocol/index.ts';
