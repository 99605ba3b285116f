import type { Environment } from '@servicepay/node/protocol';

export interface AccountRequest {
  environment: Environment;
  amount: number;
  currency: string;
  accountName: string;
  expiresAt: number;
}

export interface ProvisionedAccount {
  accountNumber: string;
  bankName: string;
  accountName: string;
  expiresAt: number;
}

/**
 * What the service asks of its partner bank. The simulated bank implements it in-process; a real bank
 * integration would implement it over the bank's API.
 */
export interface BankGateway {
  /** A new, never-used account that credits exactly `amount` until `expiresAt`. */
  provisionAccount(request: AccountRequest): ProvisionedAccount;
  /** Stops the account from crediting; later transfers are returned to the payer. */
  closeAccount(accountNumber: string): void;
}
