/**
 * The part of autocannon's API that `load-generator.ts` uses. autocannon ships no types, and this subset is
 * smaller than adding `@types/autocannon` as another dependency.
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Called before each request is written; returns the request to send. */
    setupRequest?: (request: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest;
  }

  interface AutocannonOptions {
    url: string;
    connections: number;
    pipelining?: number;
    /** Seconds. */
    duration: number;
    /** Seconds before a request counts as timed out. */
    timeout?: number;
    requests?: AutocannonRequest[];
  }

  /** Emits `response` (client, statusCode, bytes, responseTime ms), `reqError` (error) and `done` (result). */
  type Instance = EventEmitter & { stop(): void };

  function autocannon(options: AutocannonOptions, done: (error: unknown, result: unknown) => void): Instance;
  export default autocannon;
}
