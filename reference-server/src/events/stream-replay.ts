import type { Session, StatusReason } from '@servicepay/node/protocol';
import type { SessionUpdate } from '../db/broadcaster.ts';
import type { Store } from '../db/store.ts';
import { isTerminal } from '../views/session-status.ts';
import { toSessionView, toStatusMessage } from '../views/session-views.ts';
import { statusFrame } from './sse-frames.ts';

/** What a new stream starts with: its frames, the seq of the last, and whether that status ends the stream. */
export interface Replay {
  frames: string;
  seq: number;
  terminal: boolean;
}

/**
 * The frames a new stream starts with, from the events table: with `lastEventId`, every event after it
 * (the last being the current state); else, or if none is after it, the last event. Each event holds the
 * session as it was after it, so the id and the state of every frame always agree. A session with no event
 * yet (seq 0) is read as it is. Undefined if the session does not exist.
 *
 * @example
 * const replay = await readReplay(store, sessionId, lastEventId);
 */
export async function readReplay(
  store: Store,
  sessionId: string,
  lastEventId: number | undefined,
): Promise<Replay | undefined> {
  const { events: eventStore, sessions, virtualAccounts, businesses } = store;
  const events = lastEventId === undefined ? [] : await eventStore.forSessionAfter(sessionId, lastEventId);
  if (events.length === 0) {
    const last = await eventStore.lastForSession(sessionId);
    if (last) events.push(last);
  }
  const first = events[0];
  if (!first) {
    const session = await sessions.find(sessionId);
    if (!session) return undefined;
    const account =
      session.accountNumber === null ? undefined : await virtualAccounts.find(session.accountNumber);
    const merchantName = (await businesses.find(session.businessId))?.name ?? '';
    const message = toStatusMessage(toSessionView(session, account), merchantName, null);
    return { frames: statusFrame(0, message), seq: 0, terminal: isTerminal(session.status) };
  }
  const merchantName = (await businesses.find(first.businessId))?.name ?? '';
  let frames = '';
  let seq = 0;
  let terminal = false;
  for (const event of events) {
    const view = JSON.parse(event.payload) as Session;
    frames += statusFrame(
      event.seq,
      toStatusMessage(view, merchantName, event.reason as StatusReason | null),
    );
    seq = event.seq;
    terminal = isTerminal(view.status);
  }
  return { frames, seq, terminal };
}

/**
 * The session's transitions after `after`, from the events table, as the broadcaster would have sent them
 * (for a catch-up after the broadcaster missed some).
 *
 * @example
 * for (const update of await readUpdatesAfter(store, sessionId, lastSeq)) deliver(update);
 */
export async function readUpdatesAfter(
  store: Store,
  sessionId: string,
  after: number,
): Promise<SessionUpdate[]> {
  const events = await store.events.forSessionAfter(sessionId, after);
  const first = events[0];
  if (!first) return [];
  const merchantName = (await store.businesses.find(first.businessId))?.name ?? '';
  return events.map((event) => ({
    sessionId,
    seq: event.seq,
    message: toStatusMessage(
      JSON.parse(event.payload) as Session,
      merchantName,
      event.reason as StatusReason | null,
    ),
  }));
}
