<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Orders;

use ServicePay\WooCommerce\Orders\OrderSessions;
use ServicePay\WooCommerce\Orders\Settlement;
use ServicePay\WooCommerce\Tests\Support\Concurrently;
use ServicePay\WooCommerce\Tests\WordPressTestCase;

require_once __DIR__ . '/../support/Concurrently.php';

/**
 * @group wordpress
 */
final class SettlementTest extends WordPressTestCase {

	private function session_id(): string {
		return 'ses_' . wp_generate_password( 24, false );
	}

	public function test_a_paid_session_settles_the_order_once_however_often_it_is_applied(): void {
		$order   = $this->order_with_session( '25.00', $this->session_id() );
		$session = $this->session_of( $order, 'successful' );
		$this->assertSame( Settlement::SETTLED, Settlement::apply( $order, $session, 'evt_1' ) );
		$this->assertSame( Settlement::ALREADY_PAID, Settlement::apply( $order, $session, 'evt_1' ) );
		$this->assertSame( Settlement::ALREADY_PAID, Settlement::apply( $order, $session, '' ) );
		$order = wc_get_order( $order->get_id() );
		$this->assertSame( 'processing', $order->get_status() );
		$this->assertSame( $session['id'], $order->get_transaction_id() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Session: ' . $session['id'] . '. Reference: ' . $session['reference'] ) );
		$this->assertSame( 4, $this->stock_of( $order ) );
	}

	public function test_six_concurrent_processes_settle_once_with_one_note_one_stock_reduction_one_email(): void {
		$order = $this->order_with_session( '40.00', $this->session_id() );
		$email = 'race-' . $order->get_id() . '@example.com';
		$order->set_billing_email( $email );
		$order->save();
		$session = $this->session_of( $order, 'successful' );
		$results = Concurrently::run( 6, 'settle', $order->get_id(), array( wp_json_encode( $session ) ) );
		$outcomes = array_count_values( array_column( $results, 'result' ) );
		$this->assertSame( array( Settlement::SETTLED => 1, Settlement::ALREADY_PAID => 5 ), array( Settlement::SETTLED => $outcomes['settled'] ?? 0, Settlement::ALREADY_PAID => $outcomes['already_paid'] ?? 0 ) );
		$order = wc_get_order( $order->get_id() );
		$this->assertSame( 'processing', $order->get_status() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'received by bank transfer' ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Stock levels reduced' ) );
		$this->assertSame( 0, $this->notes_containing( $order->get_id(), 'second ServicePay payment' ) );
		$this->assertSame( 4, $this->stock_of( $order ) );
		$this->assertSame( 1, $this->emails_to( $email ) );
	}

	public function test_a_paid_status_the_database_dropped_is_written_again_without_a_second_mail_note_or_stock_change(): void {
		$order = $this->order_with_session( '25.00', $this->session_id() );
		$email = 'dropped-' . $order->get_id() . '@example.com';
		$order->set_billing_email( $email );
		$order->save();
		$session = $this->session_of( $order, 'successful' );

		$this->assert_settled_once_though_the_paid_status_was_dropped( $order, $session, 'Pending payment to Processing' );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Stock levels reduced' ) );
		$this->assertSame( 4, $this->stock_of( $order ) );
		$this->assertSame( 1, $this->emails_to( $email ) );
		$this->assertSame( Settlement::ALREADY_PAID, Settlement::apply( $order, $session, 'evt_dropped' ) );
	}

	public function test_an_order_put_on_hold_while_its_payer_paid_ends_processing_even_when_the_database_drops_that_write(): void {
		$order = $this->order_with_session( '25.00', $this->session_id() );
		// The shop owner holds the order while the payer is transferring; WooCommerce lets a payment complete it.
		$order->update_status( 'on-hold' );
		wp_cache_flush();
		$held    = wc_get_order( $order->get_id() );
		$session = $this->session_of( $held, 'successful' );

		$this->assert_settled_once_though_the_paid_status_was_dropped( $held, $session, 'On hold to Processing' );
		$this->assertSame( Settlement::ALREADY_PAID, Settlement::apply( $held, $session, 'evt_dropped' ) );
	}

	/**
	 * Applies a paid session while the database drops the first write of the paid status, and checks that the
	 * order ends paid as stored, with one payment note and one note of WooCommerce's status change.
	 *
	 * @param \WC_Order           $order      The order as it is before the payment.
	 * @param array<string,mixed> $session    The paid session.
	 * @param string              $transition WooCommerce's note of the change, e.g. "Pending payment to Processing".
	 */
	private function assert_settled_once_though_the_paid_status_was_dropped( \WC_Order $order, array $session, string $transition ): void {
		[ $result, $dropped ] = $this->with_status_dropped( 'processing', 1, static fn () => Settlement::apply( $order, $session, 'evt_dropped' ) );
		$this->assertSame( 1, $dropped );
		$this->assertSame( Settlement::SETTLED, $result );
		wp_cache_flush();
		$stored = wc_get_order( $order->get_id() );
		$this->assertSame( 'processing', $stored->get_status() );
		$this->assertSame( $session['id'], $stored->get_transaction_id() );
		$this->assertNotNull( $stored->get_date_paid() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'received by bank transfer' ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), $transition ) );
	}

	/**
	 * The session, the order status it calls for, what apply() answers once that is stored (the name of the
	 * Settlement constant: PHPUnit calls providers while it collects tests, also in the run without WordPress,
	 * where loading Settlement would end the process), whether the order is then paid (its transaction id
	 * the session's), the plugin's note on it, WooCommerce's note of the change, and how many different mails
	 * WooCommerce sends about it (paid and on hold: the payer's and the shop's "new order"; failed: the shop's).
	 *
	 * @return array<string,array{0:string,1:array<string,mixed>,2:string,3:string,4:bool,5:string,6:string,7:int}>
	 */
	public function outcomes(): array {
		return array(
			'paid'                    => array( 'successful', array(), 'processing', 'SETTLED', true, 'received by bank transfer', 'Pending payment to Processing', 2 ),
			'held for another amount' => array( 'successful', array( 'amount' => 2499 ), 'on-hold', 'AMOUNT_MISMATCH', false, 'was paid 24.99 USD', 'Pending payment to On hold', 2 ),
			'failed when it expired'  => array( 'expired', array(), 'failed', 'NOTED', false, 'expired before the transfer arrived', 'Pending payment to Failed', 1 ),
		);
	}

	/**
	 * WooCommerce runs the status change (its note, mails, stock change) though the database lost the status;
	 * the request that retries stores the status without running it again.
	 *
	 * @dataProvider outcomes
	 * @param array<string,mixed> $extra Overrides of the session.
	 */
	public function test_a_status_the_database_keeps_dropping_is_answered_for_a_retry_that_stores_it_without_a_second_note_or_mail( string $session_status, array $extra, string $status, string $outcome, bool $paid, string $note, string $transition, int $mails ): void {
		$order = $this->order_with_session( '25.00', $this->session_id() );
		$order->set_billing_email( 'dropping-' . $order->get_id() . '@example.com' );
		$order->save();
		$session = $this->session_of( $order, $session_status, $extra );

		[ $result, $dropped ] = $this->with_status_dropped( $status, 100, static fn () => Settlement::apply( $order, $session, 'evt_dropped' ) );
		$this->assertGreaterThanOrEqual( 1, $dropped );
		// The webhook answers 500 for this, so the service delivers again.
		$this->assertInstanceOf( \RuntimeException::class, $result );
		wp_cache_flush();
		$this->assertSame( 'pending', wc_get_order( $order->get_id() )->get_status() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), $transition ), 'WooCommerce ran the change' );
		$this->assertCount( $mails, $this->mails_about( $order ) );

		$this->assertSame( constant( Settlement::class . '::' . $outcome ), Settlement::apply( $order, $session, 'evt_dropped' ) );
		wp_cache_flush();
		$stored = wc_get_order( $order->get_id() );
		$this->assertSame( $status, $stored->get_status() );
		$this->assertSame( $paid ? $session['id'] : '', $stored->get_transaction_id() );
		$this->assertSame( $paid, null !== $stored->get_date_paid() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), $note ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), $transition ) );
		$this->assert_each_note_and_mail_once( $stored, $mails );
	}

	public function test_an_order_paid_while_another_request_holds_the_write_lock_ends_processing(): void {
		$order   = $this->order_with_session( '25.00', $this->session_id() );
		$session = $this->session_of( $order, 'successful' );
		$signals = sys_get_temp_dir() . '/servicepay-lock-' . bin2hex( random_bytes( 6 ) );
		mkdir( $signals );
		$holder = proc_open(
			array( PHP_BINARY, dirname( __DIR__ ) . '/support/write-lock-holder.php', $signals, '1500' ),
			array( 1 => array( 'pipe', 'w' ), 2 => array( 'pipe', 'w' ) ),
			$pipes
		);
		$wait_for = static function ( string $file ) use ( $signals ): void {
			$deadline = microtime( true ) + 60;
			while ( ! file_exists( $signals . '/' . $file ) && microtime( true ) < $deadline ) {
				usleep( 1000 );
			}
		};
		$wait_for( 'ready' );
		// The other request takes the write lock just as WooCommerce is about to save the order paid.
		$take = static function () use ( $signals, $wait_for ): void {
			touch( $signals . '/take' );
			$wait_for( 'held' );
		};
		add_action( 'woocommerce_pre_payment_complete', $take );
		try {
			$result = Settlement::apply( $order, $session, 'evt_locked' );
		} finally {
			remove_action( 'woocommerce_pre_payment_complete', $take );
			$out = stream_get_contents( $pipes[1] ) . stream_get_contents( $pipes[2] );
			proc_close( $holder );
			array_map( 'unlink', glob( $signals . '/*' ) );
			rmdir( $signals );
		}
		$this->assertStringContainsString( '"wrote":true', $out );
		$this->assertSame( Settlement::SETTLED, $result );
		wp_cache_flush();
		$stored = wc_get_order( $order->get_id() );
		$this->assertSame( 'processing', $stored->get_status() );
		$this->assertSame( $session['id'], $stored->get_transaction_id() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Pending payment to Processing' ) );
	}

	public function test_an_amount_or_currency_other_than_the_orders_is_not_settled(): void {
		$order = $this->order_with_session( '25.00', $this->session_id() );
		$this->assertSame( Settlement::AMOUNT_MISMATCH, Settlement::apply( $order, $this->session_of( $order, 'successful', array( 'amount' => 2499 ) ) ) );
		$this->assertSame( Settlement::AMOUNT_MISMATCH, Settlement::apply( $order, $this->session_of( $order, 'successful', array( 'amount' => 2499 ) ) ) );
		$order = wc_get_order( $order->get_id() );
		$this->assertSame( 'on-hold', $order->get_status() );
		$this->assertSame( '', $order->get_transaction_id() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'was paid 24.99 USD, but this order is 25.00 USD' ) );
		// WooCommerce holds stock for an on-hold order (as for a cheque); cancelling it gives the stock back.
		$this->assertSame( 4, $this->stock_of( $order ) );

		$other = $this->order_with_session( '25.00', $this->session_id() );
		$this->assertSame( Settlement::AMOUNT_MISMATCH, Settlement::apply( $other, $this->session_of( $other, 'successful', array( 'currency' => 'NGN' ) ) ) );
		$this->assertTrue( wc_get_order( $other->get_id() )->needs_payment() === false && 'on-hold' === wc_get_order( $other->get_id() )->get_status() );
	}

	public function test_a_mismatched_amount_puts_the_order_on_hold_even_when_the_database_drops_that_write(): void {
		$order = $this->order_with_session( '25.00', $this->session_id() );
		$email = 'held-' . $order->get_id() . '@example.com';
		$order->set_billing_email( $email );
		$order->save();
		$session = $this->session_of( $order, 'successful', array( 'amount' => 2499 ) );

		[ $result, $dropped ] = $this->with_status_dropped( 'on-hold', 1, static fn () => Settlement::apply( $order, $session, 'evt_held' ) );
		$this->assertSame( 1, $dropped );
		$this->assertSame( Settlement::AMOUNT_MISMATCH, $result );
		wp_cache_flush();
		$stored = wc_get_order( $order->get_id() );
		$this->assertSame( 'on-hold', $stored->get_status() );
		$this->assertFalse( $stored->needs_payment() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'was paid 24.99 USD, but this order is 25.00 USD' ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Pending payment to On hold' ) );
		$this->assertSame( 1, $this->emails_to( $email ) );
		$this->assertSame( Settlement::AMOUNT_MISMATCH, Settlement::apply( $order, $session, 'evt_held' ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'was paid 24.99 USD' ) );
	}

	public function test_a_session_of_another_order_is_ignored(): void {
		$order = $this->order_with_session( '25.00', $this->session_id() );
		$this->assertSame( Settlement::IGNORED, Settlement::apply( $order, $this->session_of( $order, 'successful', array( 'id' => 'ses_not_this_orders' ) ) ) );
		$this->assertSame( 'pending', wc_get_order( $order->get_id() )->get_status() );
	}

	public function test_a_second_session_paying_a_paid_order_asks_for_a_refund_once(): void {
		$order = $this->order_with_session( '25.00', $this->session_id() );
		Settlement::apply( $order, $this->session_of( $order, 'successful' ) );
		$second = $this->session_id();
		$order  = wc_get_order( $order->get_id() );
		OrderSessions::remember( $order, array( 'id' => $second ), 2 );
		$order->save();
		$this->assertSame( Settlement::ALREADY_PAID, Settlement::apply( $order, $this->session_of( $order, 'successful' ) ) );
		$this->assertSame( Settlement::ALREADY_PAID, Settlement::apply( $order, $this->session_of( $order, 'successful' ) ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'A second ServicePay payment arrived' ) );
		$this->assertNotSame( $second, wc_get_order( $order->get_id() )->get_transaction_id() );
	}

	public function test_expired_fails_the_order_cancelled_keeps_it_payable_and_each_notes_once(): void {
		$expired = $this->order_with_session( '25.00', $this->session_id() );
		$this->assertSame( Settlement::NOTED, Settlement::apply( $expired, $this->session_of( $expired, 'expired' ) ) );
		$this->assertSame( Settlement::IGNORED, Settlement::apply( $expired, $this->session_of( $expired, 'expired' ) ) );
		$this->assertSame( 'failed', wc_get_order( $expired->get_id() )->get_status() );
		$this->assertSame( 1, $this->notes_containing( $expired->get_id(), 'expired before the transfer arrived' ) );

		$cancelled = $this->order_with_session( '25.00', $this->session_id() );
		$this->assertSame( Settlement::NOTED, Settlement::apply( $cancelled, $this->session_of( $cancelled, 'cancelled' ) ) );
		$this->assertSame( Settlement::IGNORED, Settlement::apply( $cancelled, $this->session_of( $cancelled, 'cancelled' ) ) );
		$fresh = wc_get_order( $cancelled->get_id() );
		$this->assertSame( 'pending', $fresh->get_status() );
		$this->assertTrue( $fresh->needs_payment() );
		$this->assertSame( 1, $this->notes_containing( $cancelled->get_id(), 'cancelled the ServicePay payment' ) );
	}

	public function test_an_expired_session_fails_the_order_even_when_the_database_drops_that_write(): void {
		$order   = $this->order_with_session( '25.00', $this->session_id() );
		$session = $this->session_of( $order, 'expired' );

		[ $result, $dropped ] = $this->with_status_dropped( 'failed', 1, static fn () => Settlement::apply( $order, $session, 'evt_expired' ) );
		$this->assertSame( 1, $dropped );
		$this->assertSame( Settlement::NOTED, $result );
		wp_cache_flush();
		$this->assertSame( 'failed', wc_get_order( $order->get_id() )->get_status() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'expired before the transfer arrived' ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Pending payment to Failed' ) );
		$this->assertSame( Settlement::IGNORED, Settlement::apply( $order, $session, 'evt_expired' ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'expired before the transfer arrived' ) );
	}

	public function test_an_earlier_attempts_session_ending_does_not_touch_the_order(): void {
		$order = $this->order_with_session( '25.00', $this->session_id() );
		$first = $this->session_of( $order, 'cancelled' );
		OrderSessions::remember( $order, array( 'id' => $this->session_id() ), 2 );
		$order->save();
		$this->assertSame( Settlement::IGNORED, Settlement::apply( $order, $first ) );
		$this->assertSame( 0, $this->notes_containing( $order->get_id(), 'cancelled the ServicePay payment' ) );
	}

	public function test_a_returned_transfer_of_another_amount_is_noted_once_per_event(): void {
		$order    = $this->order_with_session( '25.00', $this->session_id() );
		$session  = $this->session_of( $order, 'mismatch', array( 'lastMismatch' => array( 'expectedAmount' => 2500, 'receivedAmount' => 2000 ) ) );
		$event    = 'evt_' . wp_generate_password( 24, false );
		$this->assertSame( Settlement::NOTED, Settlement::apply( $order, $session, $event ) );
		$this->assertSame( Settlement::IGNORED, Settlement::apply( $order, $session, $event ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'A bank transfer of 20.00 USD arrived, but 25.00 USD is due' ) );
		$this->assertSame( 'pending', wc_get_order( $order->get_id() )->get_status() );
		$this->assertSame( Settlement::OPEN, Settlement::apply( $order, $this->session_of( $order, 'awaiting_payment' ) ) );
	}
}
