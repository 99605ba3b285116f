<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Orders;

use ServicePay\WooCommerce\Orders\Settlement;
use ServicePay\WooCommerce\Orders\SettlementClaim;
use ServicePay\WooCommerce\Tests\SlowSettler;
use ServicePay\WooCommerce\Tests\WordPressTestCase;

/**
 * A request that finds the session's claim held by another: it waits (at most 2 s) for a holder that claimed
 * less than 5 s ago, so the payer's return answers the settled order, and does not settle the order itself
 * unless the holder gives the claim up (then it settles it, once; a second give-up is a retryable failure).
 * The other request is a second PHP process on the same database (tests/support/slow-settler.php) running the
 * real settlement, slowed down between taking the claims and saving the order.
 *
 * @group wordpress
 */
final class SettlementWaitTest extends WordPressTestCase {

	use SlowSettler;

	protected function tearDown(): void {
		if ( null !== $this->settler ) {
			$this->finish_settler();
		}
		parent::tearDown();
	}

	/**
	 * Runs apply() and times when it tried to take `$claim` a second time: when its wait for the holder ended and
	 * it settled again (its own settling, slow on a loaded SQLite, is not counted).
	 *
	 * @param \WC_Order           $order   Order.
	 * @param array<string,mixed> $session Session.
	 * @param string              $claim   The claim the other request holds.
	 * @return array{0:string,1:float} What apply() answered, and the seconds until the second take (INF if none).
	 */
	private function apply_timing_the_second_take( \WC_Order $order, array $session, string $claim ): array {
		$takes   = 0;
		$again   = INF;
		$started = microtime( true );
		$time    = static function ( $query ) use ( &$takes, &$again, $started, $claim ) {
			if ( is_string( $query ) && preg_match( '/^\s*INSERT\s+IGNORE\b/i', $query ) && str_contains( $query, "'" . $claim . "'" ) && 2 === ++$takes ) {
				$again = microtime( true ) - $started;
			}
			return $query;
		};
		add_filter( 'query', $time );
		try {
			$result = Settlement::apply( $order, $session );
		} finally {
			remove_filter( 'query', $time );
		}
		return array( $result, $again );
	}

	public function test_a_return_racing_a_settlement_that_finishes_within_two_seconds_waits_and_answers_the_paid_order(): void {
		[ $order, $session, $email ] = $this->paid_order();
		$this->start_settler( $order, $session, 400 );

		$started = microtime( true );
		$result  = Settlement::apply( $order, $session );
		$waited  = microtime( true ) - $started;

		// Without the wait this request would answer at once, while the database still says pending.
		$this->assertSame( Settlement::ALREADY_PAID, $result );
		$right_after = $this->stored( $order );
		$this->assertSame( 'processing', $right_after->get_status(), 'the answer comes after the other request stored the paid order' );
		$this->assertSame( $session['id'], $right_after->get_transaction_id() );
		$this->assertGreaterThan( 0.2, $waited );
		$this->assertLessThan( 1.95, $waited, 'it stopped waiting when the order was paid, not at the deadline' );

		$this->assertSame( Settlement::SETTLED, $this->finish_settler() );
		$this->assert_paid_once( $order, $session, $email );
		// Once paid, a further delivery neither waits nor settles.
		$this->assertSame( Settlement::ALREADY_PAID, Settlement::apply( $order, $session, 'evt_again' ) );
		$this->assert_paid_once( $order, $session, $email );
	}

	public function test_a_return_racing_a_settlement_slower_than_two_seconds_gives_up_unsettled_and_the_order_is_paid_once(): void {
		[ $order, $session, $email ] = $this->paid_order();
		$this->start_settler( $order, $session, 3500 );

		$started = microtime( true );
		$result  = Settlement::apply( $order, $session );
		$waited  = microtime( true ) - $started;

		// It answers "already paid" (the claim is the other request's) without touching the order, which the
		// database still holds pending: the return page (the confirm route) then says orderStatus pending, not paid.
		$this->assertSame( Settlement::ALREADY_PAID, $result );
		$this->assertFileDoesNotExist( $this->signals . '/done', 'it gave up before the other request finished' );
		$right_after = $this->stored( $order );
		$this->assertSame( 'pending', $right_after->get_status() );
		$this->assertSame( '', $right_after->get_transaction_id() );
		// No payment note yet: it comes with WooCommerce's status change, after the save the other request is in.
		$this->assertSame( 0, $this->notes_containing( $order->get_id(), 'received by bank transfer' ) );
		$this->assertGreaterThan( 1.8, $waited, 'it waited about two seconds' );
		$this->assertLessThan( 3.4, $waited, 'not for the other request' );

		$this->assertSame( Settlement::SETTLED, $this->finish_settler() );
		$this->assert_paid_once( $order, $session, $email );
	}

	public function test_a_return_racing_a_settlement_made_to_fail_within_the_wait_settles_it_itself_once_the_claims_are_given_back(): void {
		[ $order, $session, $email ] = $this->paid_order();
		$this->start_settler( $order, $session, 400, '', 'fail' );

		[ $result, $waited ] = $this->apply_timing_the_second_take( $order, $session, 'session-paid:' . $session['id'] );

		// The holder gives its claims back and throws with the order still pending. Answering "already paid" then
		// would be false (a webhook answered 200 is not delivered again): this request takes the claims and settles.
		$this->assertSame( Settlement::SETTLED, $result );
		$this->assertSame( 'threw: The order could not be marked paid; it will be retried.', $this->finish_settler() );
		$this->assertGreaterThan( 0.2, $waited, 'it waited for the holder' );
		$this->assertLessThan( 1.95, $waited, 'it stopped waiting when the claims were given back, not at the deadline' );
		$this->assertTrue( SettlementClaim::exists( 'session-paid:' . $session['id'] ) );
		$this->assertTrue( SettlementClaim::exists( 'paid:' . $order->get_id() ) );
		$this->assert_paid_once( $order, $session, $email );

		// Once paid, a further delivery neither waits nor settles.
		$this->assertSame( Settlement::ALREADY_PAID, Settlement::apply( $order, $session, 'evt_again' ) );
		$this->assert_paid_once( $order, $session, $email );
	}

	public function test_simulated_holders_giving_the_claim_up_twice_make_it_settle_again_once_then_fail_retryably(): void {
		[ $order, $session, $email ] = $this->paid_order();
		$claim = 'session-paid:' . $session['id'];
		$this->assertTrue( SettlementClaim::take( $claim, $order->get_id() ) );
		// Simulated (in this process, through the `query` filter): each time this request looks for the holder's
		// claim, the holder has just given it up; each time it takes the claim, another request took it a moment
		// before. Three times at most, so a request that settled again a second time would then settle.
		$gave_up  = 0;
		$busy     = false;
		$id       = $order->get_id();
		$simulate = static function ( $query ) use ( &$gave_up, &$busy, $claim, $id ) {
			if ( $busy || $gave_up >= 3 || ! is_string( $query ) || ! str_contains( $query, "'" . $claim . "'" ) ) {
				return $query;
			}
			$busy = true;
			if ( preg_match( '/^\s*SELECT\s+claim_key\b/i', $query ) ) {
				SettlementClaim::release( $claim );
				++$gave_up;
			} elseif ( preg_match( '/^\s*INSERT\s+IGNORE\b/i', $query ) ) {
				SettlementClaim::take( $claim, $id );
			}
			$busy = false;
			return $query;
		};
		add_filter( 'query', $simulate );
		$started = microtime( true );
		try {
			Settlement::apply( $order, $session, 'evt_first' );
			$this->fail( 'a second give-up must not be answered as settled or already paid' );
		} catch ( \RuntimeException $error ) {
			$this->assertStringContainsString( 'it will be retried', $error->getMessage() );
		} finally {
			remove_filter( 'query', $simulate );
		}
		$waited = microtime( true ) - $started;

		$this->assertSame( 2, $gave_up, 'it settled again once, not more' );
		$this->assertLessThan( 1.5, $waited, 'no two-second wait once the claim is gone' );
		$stored = $this->stored( $order );
		$this->assertSame( 'pending', $stored->get_status() );
		$this->assertSame( 0, $this->notes_containing( $order->get_id(), 'received by bank transfer' ) );
		$this->assertSame( 5, $this->stock_of( $order ) );
		$this->assertSame( 0, $this->emails_to( $email ) );
		$this->assertFalse( SettlementClaim::exists( $claim ), 'the claim is free for the redelivery' );

		// The webhook, answered 500, comes again and pays it once.
		$this->assertSame( Settlement::SETTLED, Settlement::apply( $order, $session, 'evt_first' ) );
		$this->assert_paid_once( $order, $session, $email );
	}

	public function test_a_return_racing_the_hold_of_another_amount_waits_and_answers_the_order_on_hold(): void {
		[ $order, , $email ] = $this->paid_order();
		$session             = $this->session_of( $order, 'successful', array( 'amount' => 2499 ) );
		$this->start_settler( $order, $session, 400, 'amount-mismatch:' . $session['id'] );

		$started = microtime( true );
		$result  = Settlement::apply( $order, $session );
		$waited  = microtime( true ) - $started;

		$this->assertSame( Settlement::AMOUNT_MISMATCH, $result );
		$this->assertSame( 'on-hold', $this->stored( $order )->get_status(), 'the answer comes after the other request stored the hold' );
		$this->assertLessThan( 1.95, $waited );

		$this->assertSame( Settlement::AMOUNT_MISMATCH, $this->finish_settler() );
		$stored = $this->stored( $order );
		$this->assertSame( 'on-hold', $stored->get_status() );
		$this->assertSame( '', $stored->get_transaction_id() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'was paid 24.99 USD, but this order is 25.00 USD' ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Pending payment to On hold' ) );
		$this->assertSame( 1, $this->emails_to( $email ) );
	}

	public function test_a_return_racing_a_settlement_whose_paid_status_the_database_lost_stores_it_without_a_second_note_or_mail(): void {
		[ $order, $session, $email ] = $this->paid_order();
		// 100 ms: after its lost write WooCommerce still writes the holder's notes, mail and stock (about a second
		// on a loaded SQLite), and the holder must give up within this request's two seconds.
		$this->start_settler( $order, $session, 100, '', 'fail-paid' );

		[ $result, $waited ] = $this->apply_timing_the_second_take( $order, $session, 'session-paid:' . $session['id'] );

		// The holder's processing status was lost after WooCommerce had written its notes, sent its mails and
		// reduced the stock; it gave its claims back and threw, the order still pending. This request settles it by
		// storing the paid status alone: the payer and the shop owner hear of the payment once.
		$this->assertSame( Settlement::SETTLED, $result );
		$this->assertSame( 'threw: The order could not be marked paid; it will be retried.', $this->finish_settler() );
		$this->assertLessThan( 1.95, $waited, 'it stopped waiting when the claims were given back, not at the deadline' );
		$this->assertTrue( SettlementClaim::exists( 'session-paid:' . $session['id'] ) );
		$this->assert_paid_once( $order, $session, $email );

		$this->assertSame( Settlement::ALREADY_PAID, Settlement::apply( $order, $session, 'evt_again' ) );
		$this->assert_paid_once( $order, $session, $email );
	}

	public function test_a_return_racing_a_hold_made_to_fail_within_the_wait_puts_the_order_on_hold_itself_without_a_second_note_or_mail(): void {
		[ $order, , $email ] = $this->paid_order();
		$session             = $this->session_of( $order, 'successful', array( 'amount' => 2499 ) );
		// 100 ms: after its lost write WooCommerce still writes the holder's notes, mail and stock (about a second
		// on a loaded SQLite), and the holder must give up within this request's two seconds.
		$this->start_settler( $order, $session, 100, 'amount-mismatch:' . $session['id'], 'fail-hold' );

		[ $result, $waited ] = $this->apply_timing_the_second_take( $order, $session, 'amount-mismatch:' . $session['id'] );

		// The holder's on-hold status was lost, so it gave the hold claim back and threw, the order still pending
		// (payable): this request puts it on hold instead of answering a hold that is not there.
		$this->assertSame( Settlement::AMOUNT_MISMATCH, $result );
		$this->assertSame( 'threw: The order could not be put on hold; it will be retried.', $this->finish_settler() );
		$this->assertLessThan( 1.95, $waited, 'it stopped waiting when the claim was given back, not at the deadline' );
		$this->assertTrue( SettlementClaim::exists( 'amount-mismatch:' . $session['id'] ) );
		$stored = $this->stored( $order );
		$this->assertSame( 'on-hold', $stored->get_status() );
		$this->assertSame( '', $stored->get_transaction_id() );
		// On hold holds the stock (WooCommerce reduces it on the way there): once, though both requests moved it.
		$this->assertSame( 4, $this->stock_of( $order ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Stock levels reduced' ) );
		// WooCommerce wrote the holder's status note and sent its mails although the status was lost; this request
		// stored the status alone, without a second note or mail.
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'was paid 24.99 USD, but this order is 25.00 USD' ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Pending payment to On hold' ) );
		$this->assertSame( 1, $this->emails_to( $email ) );
		$this->assert_each_note_and_mail_once( $stored, 2 );
		$this->assertSame( 0, $this->notes_containing( $order->get_id(), 'received by bank transfer' ) );
	}

	public function test_a_claim_backdated_ten_seconds_is_neither_waited_for_nor_taken_over(): void {
		global $wpdb;
		[ $order, $session, $email ] = $this->paid_order();
		// Simulated: a holder that claimed ten seconds ago and has not stored anything yet (slow, or dead).
		$claim = 'session-paid:' . $session['id'];
		$this->assertTrue( SettlementClaim::take( $claim, $order->get_id() ) );
		$created = gmdate( 'Y-m-d H:i:s', time() - 10 );
		$wpdb->update( SettlementClaim::table(), array( 'created_at' => $created ), array( 'claim_key' => $claim ) );

		$started = microtime( true );
		$result  = Settlement::apply( $order, $session );
		$waited  = microtime( true ) - $started;

		$this->assertSame( Settlement::ALREADY_PAID, $result );
		$this->assertLessThan( 1.5, $waited, 'no two-second wait for a claim older than 5 s' );
		// Younger than the two minutes after which a claim counts as abandoned: left to its holder (or to the
		// webhook's retry and the scheduled check, which take it over then).
		$this->assertSame( $created, $wpdb->get_var( $wpdb->prepare( 'SELECT created_at FROM ' . SettlementClaim::table() . ' WHERE claim_key = %s', $claim ) ) );
		$stored = $this->stored( $order );
		$this->assertSame( 'pending', $stored->get_status() );
		$this->assertSame( 0, $this->notes_containing( $order->get_id(), 'received by bank transfer' ) );
		$this->assertSame( 5, $this->stock_of( $order ) );
		$this->assertSame( 0, $this->emails_to( $email ) );
	}

	public function test_a_claim_backdated_three_minutes_is_taken_over_at_once_and_settled_once(): void {
		global $wpdb;
		[ $order, $session, $email ] = $this->paid_order();
		// Simulated: a holder that claimed three minutes ago and died before settling.
		$claim = 'session-paid:' . $session['id'];
		$this->assertTrue( SettlementClaim::take( $claim, $order->get_id() ) );
		$wpdb->update( SettlementClaim::table(), array( 'created_at' => gmdate( 'Y-m-d H:i:s', time() - 180 ) ), array( 'claim_key' => $claim ) );

		$started = microtime( true );
		$result  = Settlement::apply( $order, $session );
		$waited  = microtime( true ) - $started;

		$this->assertSame( Settlement::SETTLED, $result );
		$this->assertLessThan( 1.9, $waited, 'taken over without a two-second wait' );
		$this->assertTrue( SettlementClaim::recent( $claim, 60 ), 'the claim is this request\'s now' );
		$this->assert_paid_once( $order, $session, $email );
		$this->assertSame( Settlement::ALREADY_PAID, Settlement::apply( $order, $session, 'evt_again' ) );
		$this->assert_paid_once( $order, $session, $email );
	}
}
