import { ServicePayError } from '../errors.ts';

/** The Node modules the SDK takes when first needed, never imports (the package loads in runtimes without them). */
interface NodeBuiltins {
  'node:fs': typeof import('node:fs');
  'node:stream': typeof import('node:stream');
  'node:stream/promises': typeof import('node:stream/promises');
}

/**
 * A Node module taken with `process.getBuiltinModule` when a streaming call first needs it, as the webhook
 * helpers take `node:crypto`: the package imports nothing of Node's when it loads, so it still loads on an edge
 * runtime (which then cannot stream an export, and is told so before anything is sent).
 *
 * @example
 * const { Readable } = nodeBuiltin('node:stream');
 */
export function nodeBuiltin<const Id extends keyof NodeBuiltins>(id: Id): NodeBuiltins[Id] {
  const loaded =
    typeof process === 'undefined'
      ? undefined
      : (process.getBuiltinModule?.(id) as NodeBuiltins[Id] | undefined);
  if (loaded === undefined) {
    throw new ServicePayError({
      code: 'node_streams_unavailable',
      message: `Exports are Node streams and need ${id}, which this runtime lacks (Node 22.3 or newer has it).`,
    });
  }
  return loaded;
}
