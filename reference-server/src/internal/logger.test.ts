import { describe, expect, it } from 'vitest';
import { call } from '../../../test/support/api.ts';
import { startServer } from '../../../test/support/server.ts';
import { createJsonLogger } from './logger.ts';
import { requestScope } from './request-scope.ts';

// Issue 28: a log level an operator sets, and the request id on every line a request writes, so one request's
// lines are found with one filter. The lines are the logger's real JSON output.

const collect = (level?: Parameters<typeof createJsonLogger>[1]) => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createJsonLogger((line) => lines.push(JSON.parse(line)), level);
  return { lines, logger };
};

describe('createJsonLogger', () => {
  it('writes the entries at its level and above only', () => {
    const { lines, logger } = collect('warn');
    logger.info('routine');
    logger.warn('odd');
    logger.error('broken');
    expect(lines.map((line) => [line.level, line.message])).toEqual([
      ['warn', 'odd'],
      ['error', 'broken'],
    ]);
    const silent = collect('silent');
    silent.logger.error('broken');
    expect(silent.lines).toEqual([]);
  });

  it('adds the request id of the work it is called from, through awaits, and none outside a request', async () => {
    const { lines, logger } = collect();
    logger.info('at start');
    await requestScope.run({ requestId: 'req_abc' }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      logger.warn('inside', { requestId: 'kept when given' });
      logger.info('inside again');
    });
    expect(lines.map((line) => line.requestId)).toEqual([undefined, 'kept when given', 'req_abc']);
  });

  it("still masks secrets, the request's fields included", () => {
    const { lines, logger } = collect();
    requestScope.run({ requestId: 'req_x' }, () => logger.warn('key sk_test_abcdefgh1234 seen'));
    expect(lines[0]?.message).toBe('key sk_[redacted] seen');
  });
});

describe('a running service', () => {
  it("puts the answer's Request-Id on the line a request writes after an await (the health probe's)", async () => {
    const { lines, logger } = collect();
    const server = await startServer({}, { logger });
    try {
      server.service.db.close();
      const answer = await call(server.baseUrl, 'GET', '/health');
      expect(answer.status).toBe(503);
      const said = lines.filter((line) => String(line.message).startsWith('health check'));
      expect(said).toHaveLength(1);
      expect(said[0]?.requestId).toBe(answer.headers.get('request-id'));
    } finally {
      await server.close();
    }
  });
});
