<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Orders;

use ServicePay\WooCommerce\Orders\Settlement;
use ServicePay\WooCommerce\Orders\SettlementClaim;
use ServicePay\WooCommerce\Tests\WordPressTestCase;

/**
 * A request that finds the session's claim held by another: it waits (at most 2 s) for a holder that claimed
 * less than 5 s ago, so the payer's return answers the settled order, and never settles the order itself.
 * The other request is a second PHP process on the same database (tests/support/slow-settler.php) running the
 * real settlement, slowed down between taking the claims and saving the order.
 *
 * @group wordpress
 */
final class SettlementWaitTest extends WordPressTestCase {

	/** Signal folder of the running slow settler. */
	private string $signals = '';

	/** @var resource|null The slow settler's process. */
	private $settler = null;

	/** @var array<int,resource> Its stdout and stderr. */
	private array $pipes = array();

	protected function tearDown(): void {
		if ( null !== $this->settler ) {
			$this->finish_settler();
		}
		parent::tearDown();
	}

	/**
	 * A pending order with its paid session, and an address only its mails go to.
	 *
	 * @return array{0:\WC_Order,1:array<string,mixed>,2:string}
	 */
	private function paid_order(): array {
		$order = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$email = 'wait-' . $order->get_id() . '@example.com';
		$order->set_billing_email( $email );
		$order->save();
		return array( $order, $this->session_of( $order, 'successful' ), $email );
	}

	/**
	 * Starts the other request and returns once it holds the session's claim and is still settling (it then
	 * sleeps `$milliseconds` before saving the order).
	 *
	 * @param \WC_Order           $order        Order.
	 * @param array<string,mixed> $session      The paid session.
	 * @param int                 $milliseconds How long it keeps the claim before saving the order.
	 * @param string              $claim        The claim it holds meanwhile (default: the paid session's).
	 * @param bool                $fail         Whether its save of the order then throws (simulated failure).
	 */
	private function start_settler( \WC_Order $order, array $session, int $milliseconds, string $claim = '', bool $fail = false ): void {
		$this->signals = sys_get_temp_dir() . '/servicepay-wait-' . bin2hex( random_bytes( 6 ) );
		mkdir( $this->signals );
		$this->settler = proc_open(
			array( PHP_BINARY, dirname( __DIR__ ) . '/support/slow-settler.php', $this->signals, (string) $order->get_id(), wp_json_encode( $session ), (string) $milliseconds, $fail ? 'fail' : '' ),
			array( 1 => array( 'pipe', 'w' ), 2 => array( 'pipe', 'w' ) ),
			$this->pipes
		);
		$this->wait_for( 'ready' );
		touch( $this->signals . '/go' );
		$this->wait_for( 'claimed' );
		$this->assertTrue( SettlementClaim::exists( '' !== $claim ? $claim : 'session-paid:' . $session['id'] ), 'the other request holds the claim' );
		$this->assertFileDoesNotExist( $this->signals . '/done' );
	}

	private function wait_for( string $file ): void {
		$deadline = microtime( true ) + 60;
		while ( ! file_exists( $this->signals . '/' . $file ) && microtime( true ) < $deadline ) {
			usleep( 1000 );
		}
		$this->assertFileExists( $this->signals . '/' . $file, "the other request did not signal $file" );
	}

	/** Waits for the other request to end; returns what its apply() answered. */
	private function finish_settler(): string {
		$out = stream_get_contents( $this->pipes[1] ) . stream_get_contents( $this->pipes[2] );
		proc_close( $this->settler );
		$this->settler = null;
		array_map( 'unlink', glob( $this->signals . '/*' ) );
		rmdir( $this->signals );
		$lines  = array_values( array_filter( explode( "\n", trim( $out ) ) ) );
		$answer = json_decode( (string) end( $lines ), true );
		$this->assertIsArray( $answer, "the other request printed: $out" );
		return (string) $answer['result'];
	}

	/** The order as the database holds it now. */
	private function stored( \WC_Order $order ): \WC_Order {
		wp_cache_flush();
		return wc_get_order( $order->get_id() );
	}

	/**
	 * Paid exactly once, by the session: processing, its transaction id, one payment note, one status change,
	 * one stock reduction, one mail to the payer, no "second payment" note.
	 *
	 * @param \WC_Order           $order   Order.
	 * @param array<string,mixed> $session The paid session.
	 * @param string              $email   The payer's address.
	 */
	private function assert_paid_once( \WC_Order $order, array $session, string $email ): void {
		$stored = $this->stored( $order );
		$this->assertSame( 'processing', $stored->get_status() );
		$this->assertSame( $session['id'], $stored->get_transaction_id() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'received by bank transfer. Session: ' . $session['id'] ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Pending payment to Processing' ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Stock levels reduced' ) );
		$this->assertSame( 0, $this->notes_containing( $order->get_id(), 'second ServicePay payment' ) );
		$this->assertSame( 4, $this->stock_of( $order ) );
		$this->assertSame( 1, $this->emails_to( $email ) );
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
		// The other request's payment note (written before it saves the order paid), and none of this one's.
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'received by bank transfer' ) );
		$this->assertGreaterThan( 1.8, $waited, 'it waited about two seconds' );
		$this->assertLessThan( 3.4, $waited, 'not for the other request' );

		$this->assertSame( Settlement::SETTLED, $this->finish_settler() );
		$this->assert_paid_once( $order, $session, $email );
	}

	public function test_a_return_racing_a_settlement_made_to_fail_within_the_wait_settles_nothing_and_a_retry_pays_once(): void {
		[ $order, $session, $email ] = $this->paid_order();
		$this->start_settler( $order, $session, 400, '', true );

		// The holder gives its claims back and the order stays pending: this request does not settle it either
		// (the webhook, answered 500 by the holder, or the scheduled check does).
		$this->assertSame( Settlement::ALREADY_PAID, Settlement::apply( $order, $session ) );
		$this->assertStringStartsWith( 'threw: ', $this->finish_settler() );
		$stored = $this->stored( $order );
		$this->assertSame( 'pending', $stored->get_status() );
		$this->assertSame( '', $stored->get_transaction_id() );
		$this->assertFalse( SettlementClaim::exists( 'session-paid:' . $session['id'] ) );
		$this->assertFalse( SettlementClaim::exists( 'paid:' . $order->get_id() ) );
		$this->assertSame( 5, $this->stock_of( $order ) );
		$this->assertSame( 0, $this->emails_to( $email ) );

		// The retry pays it once. (The failed holder's payment note stays: a second one follows, the lesser harm.)
		$this->assertSame( Settlement::SETTLED, Settlement::apply( $order, $session, 'evt_retry' ) );
		$stored = $this->stored( $order );
		$this->assertSame( 'processing', $stored->get_status() );
		$this->assertSame( $session['id'], $stored->get_transaction_id() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Pending payment to Processing' ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Stock levels reduced' ) );
		$this->assertSame( 4, $this->stock_of( $order ) );
		$this->assertSame( 1, $this->emails_to( $email ) );
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
