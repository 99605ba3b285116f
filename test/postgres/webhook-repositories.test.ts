import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresRunner } from '../../reference-server/src/db/postgres/postgres-runner.ts';
import {
  type DueDelivery,
  SqlWebhookDeliveryRepository,
} from '../../reference-server/src/db/webhook-deliveries.ts';
import {
  type NewWebhookEndpoint,
  SqlWebhookEndpointRepository,
} from '../../reference-server/src/db/webhook-endpoints.ts';
import { eventually } from '../support/child-process.ts';
import { openPool } from '../support/open-pool.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import {
  openStoreTwins,
  type StoreTwins,
  seedSessionEvent,
  type TwinStore,
} from '../support/repository-twins.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';

// Issue 13: "the outbox drained by every instance with FOR UPDATE SKIP LOCKED, no delivery sent twice by two
// instances, none lost". First the same scenarios on both stores (the one repository over a real SQLite file and
// over a real PostgreSQL), which must answer equal records; then what only PostgreSQL has: `due` claims
// what it returns, for a lease, so two instances never hold one delivery at once.

reportIfPostgresMissing();

const T0 = Date.parse('2026-11-23T12:00:00.000Z');

const endpoint = (
  id: string,
  events: NewWebhookEndpoint['events'],
  overrides: Partial<NewWebhookEndpoint> = {},
): NewWebhookEndpoint => ({
  id,
  businessId: 'biz_a',
  environment: 'test',
  url: `https://${id.replace('_', '-')}.shop.example/hooks`,
  events,
  description: null,
  secretCiphertext: `sealed:${id}`,
  createdAt: T0,
  ...overrides,
});

/** A picked delivery without its claim token, which differs by store (a lease end on PostgreSQL only). */
const withoutClaim = ({ claimedUntil: _token, ...rest }: DueDelivery) => rest;

async function seedBusinesses(store: TwinStore): Promise<void> {
  await store.repos.businesses.insert({ id: 'biz_a', name: 'A Ltd', kycApproved: true, createdAt: T0 });
  await store.repos.businesses.insert({ id: 'biz_b', name: 'B Ltd', kycApproved: true, createdAt: T0 });
}

describe.runIf(postgresAvailable)('webhook repositories: SQLite and PostgreSQL answer alike', () => {
  const scratch = useScratchDatabase();
  let twins: StoreTwins;

  afterEach(async () => {
    await twins?.close();
  });

  it('endpoints: insert, find, list newest first with a cursor and a url filter, count, update, rollSecret, recordFailure, disable, softDelete', async () => {
    twins = await openStoreTwins(scratch.postgres);
    const answers = await twins.both(async (store) => {
      const { webhookEndpoints: endpoints } = store.repos;
      await seedBusinesses(store);
      const one = await endpoints.insert(
        endpoint('we_one', ['session.successful'], { description: 'orders', createdAt: T0 + 1 }),
      );
      await endpoints.insert(
        endpoint('we_two', ['session.expired', 'session.successful'], { createdAt: T0 + 2 }),
      );
      await endpoints.insert(endpoint('we_three', ['session.mismatch'], { createdAt: T0 + 3 }));
      await endpoints.insert(endpoint('we_live', ['session.successful'], { environment: 'live' }));
      await endpoints.insert(endpoint('we_other', ['session.successful'], { businessId: 'biz_b' }));
      const listed = {
        all: (await endpoints.list('biz_a', 'test', Number.MAX_SAFE_INTEGER, 10)).map((e) => e.id),
        page1: (await endpoints.list('biz_a', 'test', Number.MAX_SAFE_INTEGER, 2)).map((e) => e.id),
        page2: (await endpoints.list('biz_a', 'test', 2, 2)).map((e) => e.id),
        byUrl: (
          await endpoints.list(
            'biz_a',
            'test',
            Number.MAX_SAFE_INTEGER,
            10,
            'https://we-two.shop.example/hooks',
          )
        ).map((e) => e.id),
        live: (await endpoints.list('biz_a', 'live', Number.MAX_SAFE_INTEGER, 10)).map((e) => e.id),
        counts: [await endpoints.count('biz_a', 'test'), await endpoints.count('biz_b', 'test')],
      };
      const changed = await endpoints.update(
        one,
        { url: 'https://new.shop.example/hooks', events: ['session.expired'], description: 'renamed' },
        T0 + 10,
      );
      // Two failures in a row, then the service disables it: once.
      await endpoints.recordFailure('we_one', T0 + 20);
      await endpoints.recordFailure('we_one', T0 + 30);
      const failing = await endpoints.find('we_one');
      const disabled = await endpoints.disable('we_one', 'failing', T0 + 40);
      const disabledAgain = await endpoints.disable('we_one', 'failing', T0 + 41);
      const afterDisable = await endpoints.find('we_one');
      // A change that leaves `enabled` out keeps the service's reason; enabling clears it and the failures.
      const described = await endpoints.update(afterDisable ?? one, { description: 'still off' }, T0 + 50);
      const reEnabled = await endpoints.update(described, { enabled: true }, T0 + 60);
      const offByHand = await endpoints.update(reEnabled, { enabled: false }, T0 + 70);
      await endpoints.recordFailure('we_two', T0 + 80);
      await endpoints.recordSuccess('we_two');
      await endpoints.rollSecret('we_two', 'sealed:we_two:2', T0 + 86_400_000, T0 + 90);
      const rolled = await endpoints.find('we_two');
      const deleted = await endpoints.softDelete('we_three', T0 + 100);
      const deletedAgain = await endpoints.softDelete('we_three', T0 + 101);
      const afterDelete = {
        find: await endpoints.find('we_three'),
        list: (await endpoints.list('biz_a', 'test', Number.MAX_SAFE_INTEGER, 10)).map((e) => e.id),
        count: await endpoints.count('biz_a', 'test'),
        disable: await endpoints.disable('we_three', 'failing', T0 + 102),
      };
      const updateDeleted = await endpoints
        .update({ ...one, id: 'we_three' }, { description: 'gone' }, T0 + 110)
        .then(
          () => 'updated',
          (error: Error) => error.message,
        );
      return {
        one,
        listed,
        changed,
        failing,
        disabled,
        disabledAgain,
        afterDisable,
        described,
        reEnabled,
        offByHand,
        rolled,
        deleted,
        deletedAgain,
        afterDelete,
        updateDeleted,
        missing: await endpoints.find('we_missing'),
      };
    });
    const base = {
      businessId: 'biz_a',
      environment: 'test',
      previousSecretCiphertext: null,
      previousSecretExpiresAt: null,
      // Only live endpoints are ever read.
      deletedAt: null,
    };
    expect(answers.sqlite).toEqual({
      one: {
        ...base,
        seq: 1,
        id: 'we_one',
        url: 'https://we-one.shop.example/hooks',
        events: ['session.successful'],
        description: 'orders',
        enabled: true,
        disabledReason: null,
        secretCiphertext: 'sealed:we_one',
        consecutiveFailures: 0,
        failingSince: null,
        createdAt: T0 + 1,
        updatedAt: T0 + 1,
      },
      listed: {
        all: ['we_three', 'we_two', 'we_one'],
        page1: ['we_three', 'we_two'],
        page2: ['we_one'],
        byUrl: ['we_two'],
        live: ['we_live'],
        counts: [3, 1],
      },
      changed: expect.objectContaining({
        url: 'https://new.shop.example/hooks',
        events: ['session.expired'],
        description: 'renamed',
        enabled: true,
        updatedAt: T0 + 10,
      }),
      failing: expect.objectContaining({ consecutiveFailures: 2, failingSince: T0 + 20, enabled: true }),
      disabled: true,
      disabledAgain: false,
      afterDisable: expect.objectContaining({
        enabled: false,
        disabledReason: 'failing',
        consecutiveFailures: 2,
        updatedAt: T0 + 40,
      }),
      described: expect.objectContaining({
        description: 'still off',
        enabled: false,
        disabledReason: 'failing',
        consecutiveFailures: 2,
        failingSince: T0 + 20,
      }),
      reEnabled: expect.objectContaining({
        enabled: true,
        disabledReason: null,
        consecutiveFailures: 0,
        failingSince: null,
        updatedAt: T0 + 60,
      }),
      offByHand: expect.objectContaining({ enabled: false, disabledReason: null, updatedAt: T0 + 70 }),
      rolled: expect.objectContaining({
        secretCiphertext: 'sealed:we_two:2',
        previousSecretCiphertext: 'sealed:we_two',
        previousSecretExpiresAt: T0 + 86_400_000,
        consecutiveFailures: 0,
        failingSince: null,
        updatedAt: T0 + 90,
      }),
      deleted: true,
      deletedAgain: false,
      afterDelete: { find: undefined, list: ['we_two', 'we_one'], count: 2, disable: false },
      updateDeleted: 'webhook endpoint vanished after update',
      missing: undefined,
    });
    expect(answers.postgres).toEqual(answers.sqlite);
  });

  it('enqueueForEvent: one delivery per enabled, live, subscribed endpoint of the business and environment; the count returned', async () => {
    twins = await openStoreTwins(scratch.postgres);
    const answers = await twins.both(async (store) => {
      const { webhookEndpoints: endpoints, webhookDeliveries: deliveries } = store.repos;
      await seedBusinesses(store);
      await endpoints.insert(endpoint('we_both', ['session.successful', 'session.expired']));
      await endpoints.insert(endpoint('we_expired', ['session.expired']));
      await endpoints.insert(endpoint('we_disabled', ['session.successful']));
      await endpoints.disable('we_disabled', 'failing', T0);
      await endpoints.insert(endpoint('we_deleted', ['session.successful']));
      await endpoints.softDelete('we_deleted', T0);
      await endpoints.insert(endpoint('we_live', ['session.successful'], { environment: 'live' }));
      await endpoints.insert(endpoint('we_other', ['session.successful'], { businessId: 'biz_b' }));
      await endpoints.insert(endpoint('we_last', ['session.mismatch', 'session.successful']));
      const event = (eventId: string, type: string, environment = 'test') => ({
        eventId,
        businessId: 'biz_a',
        environment,
        type,
        now: T0 + 100,
      });
      await seedSessionEvent(store, {
        businessId: 'biz_a',
        environment: 'test',
        sessionId: 'ses_1',
        eventId: 'evt_paid',
        type: 'session.successful',
        at: T0 + 100,
      });
      await seedSessionEvent(store, {
        businessId: 'biz_a',
        environment: 'test',
        sessionId: 'ses_1',
        eventId: 'evt_expired',
        type: 'session.expired',
        at: T0 + 100,
        withSession: false,
      });
      await seedSessionEvent(store, {
        businessId: 'biz_a',
        environment: 'test',
        sessionId: 'ses_1',
        eventId: 'evt_cancelled',
        type: 'session.cancelled',
        at: T0 + 100,
        withSession: false,
      });
      await seedSessionEvent(store, {
        businessId: 'biz_a',
        environment: 'live',
        sessionId: 'ses_live',
        eventId: 'evt_live',
        type: 'session.successful',
        at: T0 + 100,
      });
      const counts = {
        paid: await deliveries.enqueueForEvent('wd_paid', event('evt_paid', 'session.successful')),
        expired: await deliveries.enqueueForEvent('wd_exp', event('evt_expired', 'session.expired')),
        cancelled: await deliveries.enqueueForEvent('wd_can', event('evt_cancelled', 'session.cancelled')),
        live: await deliveries.enqueueForEvent('wd_live', event('evt_live', 'session.successful', 'live')),
      };
      const ids = ['we_both', 'we_expired', 'we_disabled', 'we_deleted', 'we_live', 'we_other', 'we_last'];
      const perEndpoint: Record<string, unknown> = {};
      for (const id of ids) {
        perEndpoint[id] = await deliveries.list({ endpointId: id, limit: 10 });
      }
      return { counts, perEndpoint };
    });
    const delivery = (seq: number, id: string, endpointId: string, eventId: string, eventType: string) => ({
      seq,
      id,
      endpointId,
      eventId,
      eventType,
      status: 'pending',
      attemptCount: 0,
      nextAttemptAt: T0 + 100,
      createdAt: T0 + 100,
      updatedAt: T0 + 100,
    });
    expect(answers.sqlite).toEqual({
      counts: { paid: 2, expired: 2, cancelled: 0, live: 1 },
      perEndpoint: {
        // Within one event, the newest endpoint's delivery is numbered first (see enqueueForEvent).
        we_both: [
          delivery(4, 'wd_expboth', 'we_both', 'evt_expired', 'session.expired'),
          delivery(2, 'wd_paidboth', 'we_both', 'evt_paid', 'session.successful'),
        ],
        we_expired: [delivery(3, 'wd_expexpired', 'we_expired', 'evt_expired', 'session.expired')],
        we_disabled: [],
        we_deleted: [],
        we_live: [delivery(5, 'wd_livelive', 'we_live', 'evt_live', 'session.successful')],
        we_other: [],
        we_last: [delivery(1, 'wd_paidlast', 'we_last', 'evt_paid', 'session.successful')],
      },
    });
    expect(answers.postgres).toEqual(answers.sqlite);
  });

  it('due, retryAt, markSucceeded, markFailed, park, unpark and failPendingForEndpoint move each delivery alike', async () => {
    twins = await openStoreTwins(scratch.postgres);
    const credit = JSON.stringify({ id: 'uc_1', amount: 500, reason: 'session_ended' });
    const answers = await twins.both(async (store) => {
      const { webhookEndpoints: endpoints, webhookDeliveries: deliveries } = store.repos;
      await seedBusinesses(store);
      await endpoints.insert(endpoint('we_one', ['session.successful']));
      await endpoints.insert(endpoint('we_two', ['session.successful', 'session.credit_unapplied']));
      await seedSessionEvent(store, {
        businessId: 'biz_a',
        environment: 'test',
        sessionId: 'ses_1',
        eventId: 'evt_1',
        type: 'session.successful',
        at: T0,
      });
      await seedSessionEvent(store, {
        businessId: 'biz_a',
        environment: 'test',
        sessionId: 'ses_2',
        eventId: 'evt_2',
        type: 'session.successful',
        at: T0 + 1,
      });
      await seedSessionEvent(store, {
        businessId: 'biz_a',
        environment: 'test',
        sessionId: 'ses_2',
        eventId: 'evt_3',
        type: 'session.credit_unapplied',
        at: T0 + 2,
        credit,
        withSession: false,
      });
      await deliveries.enqueueForEvent('wd_1', {
        eventId: 'evt_1',
        businessId: 'biz_a',
        environment: 'test',
        type: 'session.successful',
        now: T0,
      });
      await deliveries.insert('wd_2one', 'we_one', 'evt_2', T0 + 10);
      await deliveries.insert('wd_3two', 'we_two', 'evt_3', T0 + 20);
      await endpoints.rollSecret('we_two', 'sealed:we_two:2', T0 + 86_400_000, T0 + 5);

      // Each outcome is recorded under the claim `due` handed out (its token differs by store, compared below).
      const claims = new Map<string, DueDelivery>();
      const picked = async (now: number) => {
        const due = await deliveries.due(now, 10);
        for (const delivery of due) claims.set(delivery.id, delivery);
        return due;
      };
      const claimOf = (id: string) => {
        const claim = claims.get(id);
        if (!claim) throw new Error(`${id} was never picked`);
        return claim;
      };
      const firstDue = await picked(T0 + 5);
      const firstClaims = firstDue.map((delivery) => delivery.claimedUntil);
      await deliveries.markSucceeded('wd_1one', T0 + 6);
      await deliveries.retryAt('wd_1two', T0 + 5_000, T0 + 6, claimOf('wd_1two'));
      const secondDue = await picked(T0 + 20);
      const secondClaims = secondDue.map((delivery) => delivery.claimedUntil);
      await deliveries.markFailed('wd_2one', T0 + 21, claimOf('wd_2one'));
      await deliveries.retryAt('wd_3two', T0 + 6_000, T0 + 21, claimOf('wd_3two'));
      const nextAfterOutcomes = await deliveries.nextDueAt();
      const notYet = await deliveries.due(T0 + 4_999, 10);

      // The endpoint keeps failing and is disabled: its pending deliveries are parked.
      await endpoints.disable('we_two', 'failing', T0 + 30);
      await deliveries.parkForEndpoint('we_two', T0 + 30);
      const parked = {
        next: await deliveries.nextDueAt(),
        due: await deliveries.due(T0 + 1_000_000, 10),
        delivery: await deliveries.find('wd_3two'),
      };
      // An attempt that was in flight when the endpoint was disabled records its retry: it stays parked (a
      // park takes no claim). Here: a second attempt picked under the claim the first retry left.
      await deliveries.retryAt('wd_3two', T0 + 7_000, T0 + 31, { claimedUntil: T0 + 6_000, attemptCount: 1 });
      const retriedWhileDisabled = await deliveries.find('wd_3two');

      const reEnabled = await endpoints.find('we_two');
      if (reEnabled) await endpoints.update(reEnabled, { enabled: true }, T0 + 8_000);
      await deliveries.unparkForEndpoint('we_two', T0 + 8_000);
      const unparkedDue = await picked(T0 + 8_000);
      await deliveries.failPendingForEndpoint('we_two', T0 + 9_000);
      // Outcomes are conditional on the delivery still pending: a late success changes nothing.
      const lateOutcomes = [
        await deliveries.markSucceeded('wd_1two', T0 + 9_500),
        await deliveries.retryAt('wd_2one', T0 + 9_999, T0 + 9_500, claimOf('wd_2one')),
      ];
      const final: Record<string, unknown> = {};
      for (const id of ['wd_1one', 'wd_1two', 'wd_2one', 'wd_3two']) final[id] = await deliveries.find(id);
      return {
        firstDue: firstDue.map(withoutClaim),
        secondDue: secondDue.map(withoutClaim),
        claims: { first: firstClaims, second: secondClaims },
        lateOutcomes,
        nextAfterOutcomes,
        notYet,
        parked,
        retriedWhileDisabled,
        unparkedDue: unparkedDue.map((d) => [d.id, d.attemptCount]),
        nextAtEnd: await deliveries.nextDueAt(),
        final,
      };
    });
    const dueOf = (id: string, endpointId: string, eventId: string, more: object) => ({
      id,
      endpointId,
      eventId,
      attemptCount: 0,
      url: `https://${endpointId.replace('_', '-')}.shop.example/hooks`,
      environment: 'test',
      secretCiphertext: `sealed:${endpointId}`,
      previousSecretCiphertext: null,
      previousSecretExpiresAt: null,
      eventType: 'session.successful',
      eventCreatedAt: T0,
      payload: JSON.stringify({ id: 'ses_1', status: 'successful', amount: 150000 }),
      credit: null,
      refund: null,
      ...more,
    });
    const rolledSecret = {
      secretCiphertext: 'sealed:we_two:2',
      previousSecretCiphertext: 'sealed:we_two',
      previousSecretExpiresAt: T0 + 86_400_000,
    };
    const secondSession = JSON.stringify({ id: 'ses_2', status: 'successful', amount: 150000 });
    expect(answers.sqlite).toEqual({
      // Due at the same time: in seq order, and enqueueForEvent numbered the newer endpoint's first.
      firstDue: [dueOf('wd_1two', 'we_two', 'evt_1', rolledSecret), dueOf('wd_1one', 'we_one', 'evt_1', {})],
      secondDue: [
        dueOf('wd_2one', 'we_one', 'evt_2', { eventCreatedAt: T0 + 1, payload: secondSession }),
        dueOf('wd_3two', 'we_two', 'evt_3', {
          ...rolledSecret,
          eventType: 'session.credit_unapplied',
          eventCreatedAt: T0 + 2,
          payload: secondSession,
          credit,
        }),
      ],
      // SQLite takes no lease: the token is the due time each row had.
      claims: { first: [T0, T0], second: [T0 + 10, T0 + 20] },
      lateOutcomes: [false, false],
      nextAfterOutcomes: T0 + 5_000,
      notYet: [],
      parked: {
        next: null,
        due: [],
        delivery: expect.objectContaining({ status: 'pending', attemptCount: 1, nextAttemptAt: null }),
      },
      retriedWhileDisabled: expect.objectContaining({
        status: 'pending',
        attemptCount: 2,
        nextAttemptAt: null,
        updatedAt: T0 + 31,
      }),
      unparkedDue: [
        ['wd_1two', 1],
        ['wd_3two', 2],
      ],
      nextAtEnd: null,
      final: {
        wd_1one: expect.objectContaining({ status: 'succeeded', attemptCount: 1, nextAttemptAt: null }),
        wd_1two: expect.objectContaining({
          status: 'failed',
          attemptCount: 1,
          nextAttemptAt: null,
          updatedAt: T0 + 9_000,
        }),
        wd_2one: expect.objectContaining({
          status: 'failed',
          attemptCount: 1,
          nextAttemptAt: null,
          updatedAt: T0 + 21,
        }),
        wd_3two: expect.objectContaining({
          status: 'failed',
          attemptCount: 2,
          nextAttemptAt: null,
          updatedAt: T0 + 9_000,
        }),
      },
    });
    // PostgreSQL's tokens are the ends of the 60 s leases `due` took; everything else is the same.
    expect(answers.postgres.claims).toEqual({
      first: [T0 + 5 + 60_000, T0 + 5 + 60_000],
      second: [T0 + 20 + 60_000, T0 + 20 + 60_000],
    });
    expect({ ...answers.postgres, claims: answers.sqlite.claims }).toEqual(answers.sqlite);
  });

  it('a failure applies only under the claim it was made under; a success whenever the delivery is pending', async () => {
    twins = await openStoreTwins(scratch.postgres);
    const answers = await twins.both(async (store) => {
      const { webhookEndpoints: endpoints, webhookDeliveries: deliveries } = store.repos;
      await seedBusinesses(store);
      await endpoints.insert(endpoint('we_one', ['session.successful']));
      for (const n of [1, 2]) {
        await seedSessionEvent(store, {
          businessId: 'biz_a',
          environment: 'test',
          sessionId: `ses_${n}`,
          eventId: `evt_${n}`,
          type: 'session.successful',
          at: T0,
        });
        await deliveries.insert(`wd_${n}`, 'we_one', `evt_${n}`, T0);
      }
      const [first, second] = await deliveries.due(T0 + 10, 10);
      if (!first || !second) throw new Error('both deliveries are due');
      const outcomes = {
        // The first attempt's failure, under its claim: applied.
        retried: await deliveries.retryAt('wd_1', T0 + 1_000, T0 + 20, first),
        // The same claim again (a duplicate or stale recording): its outcome was already taken.
        retriedAgain: await deliveries.retryAt('wd_1', T0 + 2_000, T0 + 21, first),
        gaveUpStale: await deliveries.markFailed('wd_1', T0 + 22, first),
        afterStale: await deliveries.find('wd_1'),
        // A claim whose count is not the delivery's (an outcome was recorded since it was taken) does not fit.
        wrongCount: await deliveries.retryAt('wd_2', T0 + 3_000, T0 + 23, {
          claimedUntil: second.claimedUntil,
          attemptCount: 1,
        }),
        // A success needs no claim: the delivery was still pending.
        succeeded: await deliveries.markSucceeded('wd_1', T0 + 30),
        succeededAgain: await deliveries.markSucceeded('wd_1', T0 + 31),
        gaveUp: await deliveries.markFailed('wd_2', T0 + 40, second),
      };
      // An endpoint disabled and enabled again while an attempt was in flight: its deliveries were released,
      // due at once; that attempt's failure no longer holds the delivery and is not applied.
      await deliveries.insert('wd_3', 'we_one', 'evt_1', T0 + 50);
      const [third] = await deliveries.due(T0 + 60, 10);
      if (!third) throw new Error('the third delivery is due');
      await deliveries.parkForEndpoint('we_one', T0 + 70);
      await deliveries.unparkForEndpoint('we_one', T0 + 80);
      const released = await deliveries.retryAt('wd_3', T0 + 5_000, T0 + 90, third);
      return {
        outcomes,
        released,
        final: [await deliveries.find('wd_1'), await deliveries.find('wd_2'), await deliveries.find('wd_3')],
        dueAfterRelease: (await deliveries.due(T0 + 80, 10)).map((d) => [d.id, d.attemptCount]),
      };
    });
    expect(answers.sqlite).toEqual({
      outcomes: {
        retried: true,
        retriedAgain: false,
        gaveUpStale: false,
        afterStale: expect.objectContaining({
          status: 'pending',
          attemptCount: 1,
          nextAttemptAt: T0 + 1_000,
        }),
        wrongCount: false,
        succeeded: true,
        succeededAgain: false,
        gaveUp: true,
      },
      released: false,
      dueAfterRelease: [['wd_3', 0]],
      final: [
        expect.objectContaining({
          status: 'succeeded',
          attemptCount: 2,
          nextAttemptAt: null,
          updatedAt: T0 + 30,
        }),
        expect.objectContaining({
          status: 'failed',
          attemptCount: 1,
          nextAttemptAt: null,
          updatedAt: T0 + 40,
        }),
        expect.objectContaining({ status: 'pending', attemptCount: 0, nextAttemptAt: T0 + 80 }),
      ],
    });
    expect(answers.postgres).toEqual(answers.sqlite);
  });

  it('list filters by status and event, pages newest first by cursor; attemptsOf groups attempts oldest first, withheld answers kept apart', async () => {
    twins = await openStoreTwins(scratch.postgres);
    const answers = await twins.both(async (store) => {
      const { webhookEndpoints: endpoints, webhookDeliveries: deliveries } = store.repos;
      await seedBusinesses(store);
      await endpoints.insert(endpoint('we_list', ['session.successful']));
      await endpoints.insert(endpoint('we_else', ['session.successful']));
      for (let n = 1; n <= 5; n += 1) {
        await seedSessionEvent(store, {
          businessId: 'biz_a',
          environment: 'test',
          sessionId: `ses_${n}`,
          eventId: `evt_${n}`,
          type: 'session.successful',
          at: T0 + n,
        });
        await deliveries.insert(`wd_${n}`, 'we_list', `evt_${n}`, T0 + n);
      }
      await deliveries.insert('wd_else', 'we_else', 'evt_1', T0);
      await deliveries.markSucceeded('wd_1', T0 + 100);
      await deliveries.markFailed('wd_2', T0 + 100, { claimedUntil: T0 + 2, attemptCount: 0 });
      const ids = async (query: Parameters<typeof deliveries.list>[0]) =>
        (await deliveries.list(query)).map((d) => d.id);
      const page1 = await deliveries.list({ endpointId: 'we_list', limit: 2 });
      const lists = {
        all: await ids({ endpointId: 'we_list', limit: 10 }),
        page1: page1.map((d) => d.id),
        page2: await ids({ endpointId: 'we_list', beforeSeq: page1.at(-1)?.seq, limit: 2 }),
        page3: await ids({ endpointId: 'we_list', beforeSeq: 2, limit: 2 }),
        pending: await ids({ endpointId: 'we_list', status: 'pending', limit: 10 }),
        succeeded: await ids({ endpointId: 'we_list', status: 'succeeded', limit: 10 }),
        event: await ids({ endpointId: 'we_list', eventId: 'evt_3', limit: 10 }),
        eventAndStatus: await ids({ endpointId: 'we_list', eventId: 'evt_3', status: 'failed', limit: 10 }),
        otherEndpoint: await ids({ endpointId: 'we_else', limit: 10 }),
      };
      await deliveries.recordAttempt({
        deliveryId: 'wd_2',
        attemptedAt: T0 + 50,
        statusCode: null,
        latencyMs: 12,
        error: 'ECONNREFUSED: connect ECONNREFUSED 203.0.113.7:443',
        responseExcerpt: null,
        responseExcerptWithheld: null,
      });
      await deliveries.recordAttempt({
        deliveryId: 'wd_1',
        attemptedAt: T0 + 60,
        statusCode: 200,
        latencyMs: 48,
        error: null,
        responseExcerpt: '{"received":true}',
        responseExcerptWithheld: null,
      });
      await deliveries.recordAttempt({
        deliveryId: 'wd_2',
        attemptedAt: T0 + 70,
        statusCode: 500,
        latencyMs: 30,
        error: null,
        // A loopback receiver's answer is not kept, whatever the caller passed.
        responseExcerpt: 'internal secrets of a private service',
        responseExcerptWithheld: 'receiver_not_public',
      });
      return {
        lists,
        attempts: await deliveries.attemptsOf(['wd_2', 'wd_1', 'wd_missing']),
        none: await deliveries.attemptsOf([]),
        unknown: await deliveries.attemptsOf(['wd_missing']),
      };
    });
    expect(answers.sqlite).toEqual({
      lists: {
        all: ['wd_5', 'wd_4', 'wd_3', 'wd_2', 'wd_1'],
        page1: ['wd_5', 'wd_4'],
        page2: ['wd_3', 'wd_2'],
        page3: ['wd_1'],
        pending: ['wd_5', 'wd_4', 'wd_3'],
        succeeded: ['wd_1'],
        event: ['wd_3'],
        eventAndStatus: [],
        otherEndpoint: ['wd_else'],
      },
      attempts: new Map([
        [
          'wd_2',
          [
            {
              deliveryId: 'wd_2',
              attemptedAt: T0 + 50,
              statusCode: null,
              latencyMs: 12,
              error: 'ECONNREFUSED: connect ECONNREFUSED 203.0.113.7:443',
              responseExcerpt: null,
              responseExcerptWithheld: null,
            },
            {
              deliveryId: 'wd_2',
              attemptedAt: T0 + 70,
              statusCode: 500,
              latencyMs: 30,
              error: null,
              responseExcerpt: null,
              responseExcerptWithheld: 'receiver_not_public',
            },
          ],
        ],
        [
          'wd_1',
          [
            {
              deliveryId: 'wd_1',
              attemptedAt: T0 + 60,
              statusCode: 200,
              latencyMs: 48,
              error: null,
              responseExcerpt: '{"received":true}',
              responseExcerptWithheld: null,
            },
          ],
        ],
      ]),
      none: new Map(),
      unknown: new Map(),
    });
    expect(answers.postgres).toEqual(answers.sqlite);
    expect([...answers.postgres.attempts.keys()]).toEqual(['wd_2', 'wd_1']);
  });
});

describe.runIf(postgresAvailable)('webhook outbox on PostgreSQL: due claims what it returns', () => {
  const scratch = useScratchDatabase();
  let twins: StoreTwins;
  const extraPools: pg.Pool[] = [];

  /** Another pool on the same database: another instance of the service. */
  const instancePool = () => {
    const pool = openPool(twins.url, { max: 4 });
    extraPools.push(pool);
    return pool;
  };

  afterEach(async () => {
    await Promise.all(extraPools.splice(0).map((pool) => pool.end()));
    await twins?.close();
  });

  /** One endpoint and `count` pending deliveries `wd_0001`…, all due at `T0`. */
  async function seedDue(count: number): Promise<string[]> {
    const store = twins.postgres;
    await seedBusinesses(store);
    await store.repos.webhookEndpoints.insert(endpoint('we_busy', ['session.successful']));
    await seedSessionEvent(store, {
      businessId: 'biz_a',
      environment: 'test',
      sessionId: 'ses_busy',
      eventId: 'evt_0',
      type: 'session.successful',
      at: T0,
    });
    await twins.pool.query(
      `INSERT INTO events (id, business_id, environment, session_id, type, payload, created_at)
       SELECT 'evt_' || lpad(n::text, 4, '0'), 'biz_a', 'test', 'ses_busy', 'session.successful', '{}', $1
       FROM generate_series(1, $2::int) AS n`,
      [T0, count],
    );
    const ids: string[] = [];
    for (let n = 1; n <= count; n += 1) {
      const suffix = String(n).padStart(4, '0');
      await store.repos.webhookDeliveries.insert(`wd_${suffix}`, 'we_busy', `evt_${suffix}`, T0);
      ids.push(`wd_${suffix}`);
    }
    return ids;
  }

  it('two instances draining 200 due deliveries at once get disjoint sets whose union is all 200', async () => {
    twins = await openStoreTwins(scratch.postgres);
    const all = await seedDue(200);
    const instances = [instancePool(), instancePool()].map(
      (pool) => new SqlWebhookDeliveryRepository(new PostgresRunner(pool)),
    );
    const claimedBy: string[][] = [[], []];
    // Each instance runs four workers at once, each asking for a few at a time until nothing is due.
    await Promise.all(
      instances.flatMap((repo, index) =>
        Array.from({ length: 4 }, async () => {
          for (;;) {
            const batch = await repo.due(T0 + 1_000, 7);
            if (batch.length === 0) return;
            claimedBy[index]?.push(...batch.map((delivery) => delivery.id));
          }
        }),
      ),
    );
    const [a = [], b = []] = claimedBy;
    expect(a.length + b.length).toBe(200);
    expect(new Set([...a, ...b]).size).toBe(200); // nothing claimed twice, within or across instances
    expect(a.filter((id) => b.includes(id))).toEqual([]);
    expect([...a, ...b].sort()).toEqual(all);
    // Every one is held for the lease (60 s by default) from the claim, none counted as an attempt.
    const { rows } = await twins.pool.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries
       WHERE status = 'pending' AND attempt_count = 0 AND next_attempt_at = $1`,
      [T0 + 1_000 + 60_000],
    );
    expect(rows[0]?.n).toBe(200);
  });

  it('SKIP LOCKED: while one instance holds a claim uncommitted, another takes the rest at once, and never the held ones', async () => {
    twins = await openStoreTwins(scratch.postgres);
    const all = await seedDue(200);
    const client = await instancePool().connect();
    try {
      await client.query('BEGIN');
      const held = await new SqlWebhookDeliveryRepository(new PostgresRunner(client)).due(T0 + 1_000, 50);
      expect(held.map((delivery) => delivery.id)).toEqual(all.slice(0, 50));
      // Without SKIP LOCKED this would wait for the transaction above (and the test would time out).
      const other = new SqlWebhookDeliveryRepository(new PostgresRunner(instancePool()));
      const rest = await other.due(T0 + 1_000, 500);
      expect(rest.map((delivery) => delivery.id)).toEqual(all.slice(50));
      await client.query('COMMIT');
      // Committed, the first claim is held by its lease: nothing is due for anyone until it ends.
      expect(await other.due(T0 + 1_000, 500)).toEqual([]);
    } finally {
      client.release();
    }
  });

  it('a claim never completed (its instance died) is due again when the lease ends, attempt count unchanged; nextDueAt says when', async () => {
    twins = await openStoreTwins(scratch.postgres);
    await seedDue(3);
    const leaseMs = 30_000;
    const dead = new SqlWebhookDeliveryRepository(new PostgresRunner(instancePool()), { leaseMs });
    const survivor = new SqlWebhookDeliveryRepository(new PostgresRunner(instancePool()), { leaseMs });
    expect(new SqlWebhookDeliveryRepository(new PostgresRunner(twins.pool)).leaseMs).toBe(60_000);

    const claimed = await dead.due(T0 + 100, 2);
    expect(claimed.map((delivery) => delivery.id)).toEqual(['wd_0001', 'wd_0002']);
    // The third is still due now; the claimed two are not reported as due now.
    expect(await survivor.nextDueAt()).toBe(T0);
    expect((await survivor.due(T0 + 100, 10)).map((delivery) => delivery.id)).toEqual(['wd_0003']);
    expect(await survivor.nextDueAt()).toBe(T0 + 100 + leaseMs);
    expect(await survivor.due(T0 + 100 + leaseMs - 1, 10)).toEqual([]);

    // The instance holding the claims never records an outcome: at the lease's end another one sends them.
    const again = await survivor.due(T0 + 100 + leaseMs, 10);
    expect(again.map((delivery) => [delivery.id, delivery.attemptCount])).toEqual([
      ['wd_0001', 0],
      ['wd_0002', 0],
      ['wd_0003', 0],
    ]);
    expect(await survivor.find('wd_0001')).toEqual(
      expect.objectContaining({
        status: 'pending',
        attemptCount: 0,
        nextAttemptAt: T0 + 100 + 2 * leaseMs,
      }),
    );
  });

  it('an outcome recorded after a claim replaces the lease: retryAt sets the retry time (sooner or later than the lease), success and failure clear it', async () => {
    twins = await openStoreTwins(scratch.postgres);
    await seedDue(3);
    const deliveries = new SqlWebhookDeliveryRepository(new PostgresRunner(instancePool()));
    const first = await deliveries.due(T0, 10);
    expect(first.map((delivery) => [delivery.id, delivery.claimedUntil])).toEqual([
      ['wd_0001', T0 + 60_000],
      ['wd_0002', T0 + 60_000],
      ['wd_0003', T0 + 60_000],
    ]);
    expect(await deliveries.nextDueAt()).toBe(T0 + 60_000);

    // The first attempt failed; the schedule says 5 s, well inside the 60 s lease: 5 s it is.
    await deliveries.recordAttempt({
      deliveryId: 'wd_0001',
      attemptedAt: T0 + 10,
      statusCode: 503,
      latencyMs: 40,
      error: null,
      responseExcerpt: null,
      responseExcerptWithheld: null,
    });
    expect(await deliveries.retryAt('wd_0001', T0 + 5_000, T0 + 60, first[0] as DueDelivery)).toBe(true);
    expect(await deliveries.find('wd_0001')).toEqual(
      expect.objectContaining({ status: 'pending', attemptCount: 1, nextAttemptAt: T0 + 5_000 }),
    );
    expect(await deliveries.nextDueAt()).toBe(T0 + 5_000);
    expect(await deliveries.due(T0 + 4_999, 10)).toEqual([]);
    const retried = await deliveries.due(T0 + 5_000, 10);
    expect(retried.map((delivery) => [delivery.id, delivery.attemptCount])).toEqual([['wd_0001', 1]]);

    // The second attempt failed too; the next delay (2 min) is past the new lease's end: 2 min it is.
    expect(
      await deliveries.retryAt('wd_0001', T0 + 5_100 + 120_000, T0 + 5_100, retried[0] as DueDelivery),
    ).toBe(true);
    const reclaimed = await deliveries.due(T0 + 5_000 + 60_000, 10);
    // Only the two claims nobody completed fall due at their lease's end, not the one scheduled later.
    expect(reclaimed).toEqual([
      expect.objectContaining({ id: 'wd_0002' }),
      expect.objectContaining({ id: 'wd_0003' }),
    ]);
    expect(await deliveries.markSucceeded('wd_0002', T0 + 65_100)).toBe(true);
    expect(await deliveries.markFailed('wd_0003', T0 + 65_100, reclaimed[1] as DueDelivery)).toBe(true);
    expect(await deliveries.nextDueAt()).toBe(T0 + 5_100 + 120_000);
    expect(await deliveries.due(T0 + 5_100 + 120_000, 10)).toEqual([
      expect.objectContaining({ id: 'wd_0001', attemptCount: 2 }),
    ]);
    await deliveries.markSucceeded('wd_0001', T0 + 130_000);
    expect(await deliveries.nextDueAt()).toBeNull();
    expect(await deliveries.due(T0 + 10_000_000, 10)).toEqual([]);
    const states = await Promise.all(['wd_0001', 'wd_0002', 'wd_0003'].map((id) => deliveries.find(id)));
    expect(states.map((state) => [state?.status, state?.attemptCount, state?.nextAttemptAt])).toEqual([
      ['succeeded', 3, null],
      ['succeeded', 1, null],
      ['failed', 1, null],
    ]);
  });

  it('conditional writes across instances: one disable and one soft delete win out of many, one outcome per delivery, and an update keeps failures recorded meanwhile', async () => {
    twins = await openStoreTwins(scratch.postgres);
    await seedDue(50);
    const [a, b] = [instancePool(), instancePool()];
    const endpointsOn = [
      new SqlWebhookEndpointRepository(new PostgresRunner(a)),
      new SqlWebhookEndpointRepository(new PostgresRunner(b)),
    ];
    const deliveriesOn = [
      new SqlWebhookDeliveryRepository(new PostgresRunner(a)),
      new SqlWebhookDeliveryRepository(new PostgresRunner(b)),
    ];
    const on = <T>(list: T[], i: number) => list[i % 2] as T;

    // A merchant reads the endpoint; meanwhile the other instance records two failed attempts.
    const read = await on(endpointsOn, 0).find('we_busy');
    if (!read) throw new Error('the endpoint was not inserted');
    await on(endpointsOn, 1).recordFailure('we_busy', T0 + 10);
    await on(endpointsOn, 1).recordFailure('we_busy', T0 + 20);
    const updated = await on(endpointsOn, 0).update(read, { description: 'renamed' }, T0 + 30);
    expect(updated).toEqual(
      expect.objectContaining({
        description: 'renamed',
        consecutiveFailures: 2,
        failingSince: T0 + 10,
        enabled: true,
      }),
    );

    // Every instance's worker sees the endpoint failing and disables it: exactly one says it did.
    const disables = await Promise.all(
      Array.from({ length: 20 }, (_, i) => on(endpointsOn, i).disable('we_busy', 'failing', T0 + 40 + i)),
    );
    expect(disables.filter(Boolean)).toHaveLength(1);

    // Two outcomes race for each of 50 deliveries (a success on one instance, a failure on the other):
    // each delivery takes exactly one, and counts one attempt.
    await Promise.all(
      Array.from({ length: 50 }, (_, n) => {
        const id = `wd_${String(n + 1).padStart(4, '0')}`;
        return Promise.all([
          on(deliveriesOn, n).markSucceeded(id, T0 + 100),
          // Never picked: the claim is the row as queued, due at T0 with no attempt.
          on(deliveriesOn, n + 1).markFailed(id, T0 + 100, { claimedUntil: T0, attemptCount: 0 }),
        ]);
      }),
    );
    const { rows } = await twins.pool.query(
      `SELECT status, attempt_count, count(*)::int AS n FROM webhook_deliveries
       GROUP BY status, attempt_count ORDER BY status`,
    );
    expect(rows.reduce((sum, row) => sum + row.n, 0)).toBe(50);
    for (const row of rows) {
      expect(['succeeded', 'failed']).toContain(row.status);
      expect(row.attempt_count).toBe(1);
    }

    const deletes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => on(endpointsOn, i).softDelete('we_busy', T0 + 200 + i)),
    );
    expect(deletes.filter(Boolean)).toHaveLength(1);
    expect(await on(endpointsOn, 0).find('we_busy')).toBeUndefined();
  });

  it('enqueueForEvent racing a disable on another instance queues nothing for the disabled endpoint, in either order', async () => {
    twins = await openStoreTwins(scratch.postgres);
    await seedDue(0);
    await seedSessionEvent(twins.postgres, {
      businessId: 'biz_a',
      environment: 'test',
      sessionId: 'ses_busy',
      eventId: 'evt_race',
      type: 'session.successful',
      at: T0,
      withSession: false,
    });
    const event = (eventId: string) => ({
      eventId,
      businessId: 'biz_a',
      environment: 'test',
      type: 'session.successful',
      now: T0,
    });
    const waitingOn = (table: string) =>
      eventually(async () => {
        const { rows } = await twins.pool.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
          [`%${table}%`],
        );
        return rows[0]?.n === 1 ? true : undefined;
      });

    // The disable (and its park) is under way on instance A when instance B's transition enqueues: B waits
    // for it and then sees the endpoint disabled.
    const admin = await instancePool().connect();
    try {
      await admin.query('BEGIN');
      await new SqlWebhookEndpointRepository(new PostgresRunner(admin)).disable('we_busy', 'failing', T0);
      await new SqlWebhookDeliveryRepository(new PostgresRunner(admin)).parkForEndpoint('we_busy', T0);
      const enqueued = new SqlWebhookDeliveryRepository(new PostgresRunner(instancePool())).enqueueForEvent(
        'wd_race',
        event('evt_race'),
      );
      await waitingOn('json_array_elements_text');
      await admin.query('COMMIT');
      expect(await enqueued).toBe(0);
    } finally {
      admin.release();
    }

    // The other order: B's transition has enqueued and not committed when A disables. A waits for it, and
    // its park then holds the new delivery too.
    const endpoints = new SqlWebhookEndpointRepository(new PostgresRunner(twins.pool));
    const current = await endpoints.find('we_busy');
    if (current) await endpoints.update(current, { enabled: true }, T0 + 1);
    const transition = await instancePool().connect();
    try {
      await transition.query('BEGIN');
      expect(
        await new SqlWebhookDeliveryRepository(new PostgresRunner(transition)).enqueueForEvent(
          'wd_late',
          event('evt_0'),
        ),
      ).toBe(1);
      const disabling = (async () => {
        const client = await instancePool().connect();
        try {
          await client.query('BEGIN');
          const changed = await new SqlWebhookEndpointRepository(new PostgresRunner(client)).disable(
            'we_busy',
            'failing',
            T0 + 2,
          );
          await new SqlWebhookDeliveryRepository(new PostgresRunner(client)).parkForEndpoint(
            'we_busy',
            T0 + 2,
          );
          await client.query('COMMIT');
          return changed;
        } finally {
          client.release();
        }
      })();
      await waitingOn('webhook_endpoints');
      await transition.query('COMMIT');
      expect(await disabling).toBe(true);
    } finally {
      transition.release();
    }
    const deliveries = new SqlWebhookDeliveryRepository(new PostgresRunner(twins.pool));
    expect(await deliveries.find('wd_latebusy')).toEqual(
      expect.objectContaining({ status: 'pending', nextAttemptAt: null }),
    );
    expect(await deliveries.nextDueAt()).toBeNull();
  });

  it('retryAt on one instance waits for a disable committing on another and leaves the delivery parked', async () => {
    twins = await openStoreTwins(scratch.postgres);
    await seedDue(1);
    const worker = new SqlWebhookDeliveryRepository(new PostgresRunner(instancePool()));
    const [claim] = await worker.due(T0, 10);
    if (!claim) throw new Error('nothing was due');

    // Instance A disables the endpoint and parks its deliveries, and has not committed yet.
    const client = await instancePool().connect();
    try {
      await client.query('BEGIN');
      expect(
        await new SqlWebhookEndpointRepository(new PostgresRunner(client)).disable(
          'we_busy',
          'failing',
          T0 + 50,
        ),
      ).toBe(true);
      await new SqlWebhookDeliveryRepository(new PostgresRunner(client)).parkForEndpoint('we_busy', T0 + 50);
      // Instance B records the failed attempt it had in flight.
      const retry = worker.retryAt('wd_0001', T0 + 5_000, T0 + 60, claim);
      await eventually(async () => {
        const { rows } = await twins.pool.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE wait_event_type = 'Lock' AND query LIKE '%webhook_endpoints%'`,
        );
        return rows[0]?.n === 1 ? true : undefined;
      });
      await client.query('COMMIT');
      expect(await retry).toBe(true);
    } finally {
      client.release();
    }
    // The retry counted the attempt but did not wake a delivery of a disabled endpoint.
    expect(await worker.find('wd_0001')).toEqual(
      expect.objectContaining({ status: 'pending', attemptCount: 1, nextAttemptAt: null }),
    );
    expect(await worker.nextDueAt()).toBeNull();
  });

  it('an attempt that outlived its lease: its late failure is refused once another instance claimed the delivery, and the second claim’s applies', async () => {
    twins = await openStoreTwins(scratch.postgres);
    await seedDue(2);
    const leaseMs = 30_000;
    const [a, b] = [instancePool(), instancePool()].map(
      (pool) => new SqlWebhookDeliveryRepository(new PostgresRunner(pool), { leaseMs }),
    );
    if (!a || !b) throw new Error('two instances');
    const attempt = (deliveryId: string, attemptedAt: number, statusCode: number) => ({
      deliveryId,
      attemptedAt,
      statusCode,
      latencyMs: 5,
      error: null,
      responseExcerpt: null,
      responseExcerptWithheld: null,
    });

    // Instance A claims both at T0; its attempts stall past the lease (a slow receiver, a paused process).
    const claimedByA = await a.due(T0, 10);
    expect(claimedByA.map((d) => [d.id, d.claimedUntil])).toEqual([
      ['wd_0001', T0 + leaseMs],
      ['wd_0002', T0 + leaseMs],
    ]);
    // The lease ends; instance B finds them due and claims them again.
    expect(await b.due(T0 + leaseMs - 1, 10)).toEqual([]);
    const claimedByB = await b.due(T0 + leaseMs, 10);
    expect(claimedByB.map((d) => [d.id, d.attemptCount, d.claimedUntil])).toEqual([
      ['wd_0001', 0, T0 + 2 * leaseMs],
      ['wd_0002', 0, T0 + 2 * leaseMs],
    ]);
    const [a1, a2] = claimedByA as [DueDelivery, DueDelivery];
    const [b1, b2] = claimedByB as [DueDelivery, DueDelivery];

    // wd_0001: A's late failure (a retry in 1 min) is refused: B's claim still holds the delivery, untouched.
    await a.recordAttempt(attempt('wd_0001', T0 + 100, 500));
    expect(await a.retryAt('wd_0001', T0 + leaseMs + 500 + 60_000, T0 + leaseMs + 500, a1)).toBe(false);
    expect(await a.markFailed('wd_0001', T0 + leaseMs + 500, a1)).toBe(false);
    expect(await b.find('wd_0001')).toEqual(
      expect.objectContaining({ status: 'pending', attemptCount: 0, nextAttemptAt: T0 + 2 * leaseMs }),
    );
    expect(await b.nextDueAt()).toBe(T0 + 2 * leaseMs);
    // B's failure applies: its retry time replaces its lease, counted once.
    await b.recordAttempt(attempt('wd_0001', T0 + leaseMs + 10, 503));
    expect(await b.retryAt('wd_0001', T0 + leaseMs + 300_000, T0 + leaseMs + 600, b1)).toBe(true);
    // And A's claim stays refused after it (the count moved too).
    expect(await a.retryAt('wd_0001', T0 + leaseMs + 700, T0 + leaseMs + 700, a1)).toBe(false);
    expect(await a.find('wd_0001')).toEqual(
      expect.objectContaining({
        status: 'pending',
        attemptCount: 1,
        nextAttemptAt: T0 + leaseMs + 300_000,
        updatedAt: T0 + leaseMs + 600,
      }),
    );
    // Every attempt stays visible, the refused one too.
    expect((await a.attemptsOf(['wd_0001'])).get('wd_0001')?.map((x) => x.statusCode)).toEqual([500, 503]);

    // wd_0002: A's attempt did reach the receiver (2xx), late: the success counts although B holds the
    // claim; B's attempt, still in flight, then fails and is refused: the delivery stays delivered.
    expect(await a.markSucceeded('wd_0002', T0 + leaseMs + 800)).toBe(true);
    expect(await b.retryAt('wd_0002', T0 + leaseMs + 60_900, T0 + leaseMs + 900, b2)).toBe(false);
    expect(await b.markSucceeded('wd_0002', T0 + leaseMs + 950)).toBe(false);
    expect(await a.markFailed('wd_0002', T0 + leaseMs + 990, a2)).toBe(false);
    expect(await b.find('wd_0002')).toEqual(
      expect.objectContaining({
        status: 'succeeded',
        attemptCount: 1,
        nextAttemptAt: null,
        updatedAt: T0 + leaseMs + 800,
      }),
    );
    expect(await b.due(T0 + 10_000_000, 10)).toEqual([
      expect.objectContaining({ id: 'wd_0001', attemptCount: 1 }),
    ]);
  });
});
