import { userInfo } from 'node:os';
import { UsageError } from './command-errors.ts';

// The flag readers every command shares. Each command names the flags it reads in its own type, so a command
// module needs nothing from the dispatcher (`cli.ts`) that parses them.

/**
 * A flag the command cannot do without, else a usage error.
 *
 * @example
 * const name = required(values, 'name');
 */
export function required<N extends string>(
  values: { readonly [K in N]?: string | undefined },
  name: N,
): string {
  const value = values[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

/**
 * A port number from a flag or a variable, `fallback` when neither gives one.
 *
 * @example
 * port(values.port ?? process.env.SERVICEPAY_PORT, 4242, '--port');
 */
export function port(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535)
    throw new UsageError(`${name} must be a port number`);
  return parsed;
}

/**
 * `--limit` of a list command: 1 to 100 000, 1 000 when not given.
 *
 * @example
 * const rows = await listAudit(store, { limit: limit(values), json: false });
 */
export function limit(values: { readonly limit?: string | undefined }): number {
  if (values.limit === undefined) return 1000;
  const parsed = Number(values.limit);
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > 100_000)
    throw new UsageError('--limit is a whole number from 1 to 100000');
  return parsed;
}

/**
 * Who runs this command, for the audit log: the operating-system user.
 *
 * @example
 * await approveKyc(store, businessId, Date.now(), cliActor()); // audit actor "cli:ada"
 */
export function cliActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return `cli:${process.env.USER ?? 'unknown'}`;
  }
}
