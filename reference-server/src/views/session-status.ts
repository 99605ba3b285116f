import type { SessionStatus } from '@servicepay/node/protocol';
import { TERMINAL_SESSION_STATUSES } from '@servicepay/node/protocol';

/**
 * Whether a session in `status` has ended for good (successful, expired, cancelled): no transition leaves it.
 * Below sessions/, bank/ and events/, which all ask it.
 *
 * @example
 * isTerminal('successful'); // true
 */
export const isTerminal = (status: SessionStatus): boolean => TERMINAL_SESSION_STATUSES.includes(status);
