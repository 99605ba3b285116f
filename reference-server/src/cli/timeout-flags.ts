import {
  ConfigError,
  checkTimeouts,
  defaultConfig,
  type ServerConfig,
  type TimeoutSetting,
} from '../config.ts';
import { UsageError } from './command-errors.ts';

/**
 * The listeners' timeout flags as `parseArgs` options, for every command line that starts the service
 * (`servicepay-server start`, `npm start`): spread into its options, so each reads the same four.
 */
export const TIMEOUT_FLAG_OPTIONS = {
  'headers-timeout-ms': { type: 'string' },
  'request-timeout-ms': { type: 'string' },
  'widget-headers-timeout-ms': { type: 'string' },
  'widget-request-timeout-ms': { type: 'string' },
} as const;

/** The flags of the listeners' timeouts that `start` reads, each in milliseconds. */
export type TimeoutFlags = { readonly [flag in keyof typeof TIMEOUT_FLAG_OPTIONS]?: string | undefined };

/** Each timeout's flag and environment variable (the flag wins when both are given). */
const SOURCES: Record<TimeoutSetting, { flag: keyof TimeoutFlags; variable: string }> = {
  headersTimeoutMs: { flag: 'headers-timeout-ms', variable: 'SERVICEPAY_HEADERS_TIMEOUT_MS' },
  requestTimeoutMs: { flag: 'request-timeout-ms', variable: 'SERVICEPAY_REQUEST_TIMEOUT_MS' },
  widgetHeadersTimeoutMs: {
    flag: 'widget-headers-timeout-ms',
    variable: 'SERVICEPAY_WIDGET_HEADERS_TIMEOUT_MS',
  },
  widgetRequestTimeoutMs: {
    flag: 'widget-request-timeout-ms',
    variable: 'SERVICEPAY_WIDGET_REQUEST_TIMEOUT_MS',
  },
};

/**
 * The listeners' timeouts as `start` was given them: each from its flag, else its environment variable, else the
 * default. A value that is not a whole number of milliseconds from 1, or a header timeout longer than its request
 * timeout, is a usage error in one line naming the flag or the variable it came from (both, for a default), so
 * that the service never gets as far as Node's own exception when it creates a listener.
 *
 * @example
 * timeouts({ 'headers-timeout-ms': '5000' }); // { headersTimeoutMs: 5000, requestTimeoutMs: 30000, … }
 */
export function timeouts(values: TimeoutFlags): Pick<ServerConfig, TimeoutSetting> {
  const defaults = defaultConfig();
  const given = {} as Pick<ServerConfig, TimeoutSetting>;
  const names = {} as Record<TimeoutSetting, string>;
  for (const setting of Object.keys(SOURCES) as TimeoutSetting[]) {
    const { flag, variable } = SOURCES[setting];
    const fromFlag = values[flag];
    const fromVariable = process.env[variable];
    const [text, name] =
      fromFlag !== undefined && fromFlag !== ''
        ? [fromFlag, `--${flag}`]
        : fromVariable !== undefined && fromVariable !== ''
          ? [fromVariable, variable]
          : [undefined, `the default of --${flag} or ${variable}`];
    names[setting] = name;
    if (text !== undefined && !/^\s*\d+\s*$/.test(text)) {
      throw new UsageError(`${name} must be a whole number of milliseconds, at least 1 (got "${text}")`);
    }
    given[setting] = text === undefined ? defaults[setting] : Number(text);
  }
  try {
    checkTimeouts(given, (setting) => names[setting]);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
  return given;
}
