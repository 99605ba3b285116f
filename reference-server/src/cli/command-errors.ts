/**
 * A mistake in how a command was called: printed with the usage text, exit code 2.
 *
 * @example
 * if (!values.name) throw new UsageError('--name is required');
 */
export class UsageError extends Error {}

/**
 * A failure that is not a usage mistake: printed as its one-line message, exit code 1.
 *
 * @example
 * throw new CommandFailed(`Port ${port} is in use (another server?)`);
 */
export class CommandFailed extends Error {}
