import { describe, expect, it } from 'vitest';
import { mockedApi, ORIGIN, ok, session } from '../../test-support/fixtures.ts';
import { ConflictError } from '../errors.ts';
import { Page } from '../pagination.ts';

const list = (ids: string[], nextCursor: string | null) => ({
  ...ok(ids.map((id) => session({ id }))),
  pagination: { hasMore: nextCursor !== null, nextCursor },
});

describe('sessions (mocked transport)', () => {
  const api = mockedApi();

  it('lists one page with its filters in the query', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({
        path: '/api/widget/sessions',
        method: 'GET',
        query: { environment: 'test', status: 'successful', limit: '2' },
      })
      .reply(200, list(['ses_3', 'ses_2'], 'ses_2'));
    const page = await api.client.sessions.list({ environment: 'test', status: 'successful', limit: 2 });
    expect(page).toBeInstanceOf(Page);
    expect(page.data.map((s) => s.id)).toEqual(['ses_3', 'ses_2']);
    expect(page.hasMore).toBe(true);
    expect(page.nextCursor).toBe('ses_2');
    expect(page.hasNextPage()).toBe(true);
  });

  it('walks every page with for await, passing nextCursor as startingAfter', async () => {
    const pool = api.agent.get(ORIGIN);
    pool
      .intercept({ path: '/api/widget/sessions', method: 'GET', query: { limit: '2' } })
      .reply(200, list(['ses_5', 'ses_4'], 'ses_4'));
    pool
      .intercept({
        path: '/api/widget/sessions',
        method: 'GET',
        query: { limit: '2', startingAfter: 'ses_4' },
      })
      .reply(200, list(['ses_3', 'ses_2'], 'ses_2'));
    pool
      .intercept({
        path: '/api/widget/sessions',
        method: 'GET',
        query: { limit: '2', startingAfter: 'ses_2' },
      })
      .reply(200, list(['ses_1'], null));
    const ids: string[] = [];
    for await (const item of api.client.sessions.list({ limit: 2 })) ids.push(item.id);
    expect(ids).toEqual(['ses_5', 'ses_4', 'ses_3', 'ses_2', 'ses_1']);
  });

  it('gives nextPage() and null after the last page', async () => {
    const pool = api.agent.get(ORIGIN);
    pool.intercept({ path: '/api/widget/sessions', method: 'GET' }).reply(200, list(['ses_2'], 'ses_2'));
    pool
      .intercept({ path: '/api/widget/sessions', method: 'GET', query: { startingAfter: 'ses_2' } })
      .reply(200, list(['ses_1'], null));
    const first = await api.client.sessions.list();
    const second = await first.nextPage();
    expect(second?.data.map((s) => s.id)).toEqual(['ses_1']);
    expect(second?.hasNextPage()).toBe(false);
    expect(await second?.nextPage()).toBeNull();
  });

  it('stops a for await early without fetching more', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions', method: 'GET' })
      .reply(200, list(['ses_2', 'ses_1'], 'ses_1'));
    const page = await api.client.sessions.list();
    for await (const item of page) {
      expect(item.id).toBe('ses_2');
      break;
    }
  });

  it('retrieves by id, escaping it into one path segment', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions/..%2Fwebhooks', method: 'GET' })
      .reply(200, ok(session()));
    await expect(api.client.sessions.retrieve('../webhooks')).resolves.toMatchObject({ id: 'ses_1' });
  });

  it('cancels with a JSON POST', async () => {
    let contentType: string | null = null;
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions/ses_1/cancel', method: 'POST' })
      .reply((options) => {
        contentType = new Headers(options.headers as Record<string, string>).get('content-type');
        return { statusCode: 200, data: ok(session({ status: 'cancelled' })) };
      });
    await expect(api.client.sessions.cancel('ses_1')).resolves.toMatchObject({ status: 'cancelled' });
    expect(contentType).toBe('application/json');
  });

  it('maps a 409 on cancel to ConflictError', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions/ses_1/cancel', method: 'POST' })
      .reply(409, { meta: { statusCode: 409, message: 'Conflict', code: 'session_not_active' } });
    const error = await api.client.sessions.cancel('ses_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ statusCode: 409, code: 'session_not_active' });
  });
});
