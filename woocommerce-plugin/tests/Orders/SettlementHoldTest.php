<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Orders;

use ServicePay\WooCommerce\Orders\OrderSessions;
use ServicePay\WooCommerce\Orders\Settlement;
use ServicePay\WooCommerce\Orders\SettlementClaim;
use ServicePay\WooCommerce\Tests\SlowSettler;
use ServicePay\WooCommerce\Tests\Support\Concurrently;
use ServicePay\WooCommerce\Tests\WordPressTestCase;

require_once __DIR__ . '/../support/Concurrently.php';

/**
 * A payment of another amount for an order that is on hold already: no status changes, so WooCommerce writes no
 * note, yet the shop owner must read why this payment needs them, once per paid session.
 *
 * @group wordpress
 */
final class SettlementHoldTest extends WordPressTestCase {

	use SlowSettler;

	private const HELD_NOTE = 'was paid 24.99 USD, but this order is 25.00 USD';

	protected function tearDown(): void {
		if ( null !== $this->settler ) {
			$this->finish_settler();
		}
		parent::tearDown();
	}

	/** A 25.00 USD order the shop owner put on hold, as the database holds it. */
	private function held_order(): \WC_Order {
		$order = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$order->set_billing_email( 'held-' . $order->get_id() . '@example.com' );
		$order->save();
		$order->update_status( 'on-hold', 'Held by the shop owner.' );
		wp_cache_flush();
		return wc_get_order( $order->get_id() );
	}

	public function test_a_payment_of_another_amount_for_an_order_the_shop_held_is_noted_once_and_leaves_it_on_hold(): void {
		$order   = $this->held_order();
		$mails   = $this->mails_about( $order );
		$session = $this->session_of( $order, 'successful', array( 'amount' => 2499 ) );

		$this->assertSame( Settlement::AMOUNT_MISMATCH, Settlement::apply( $order, $session, 'evt_held' ) );
		// The webhook delivered again, and the payer's return: nothing more.
		$this->assertSame( Settlement::AMOUNT_MISMATCH, Settlement::apply( $order, $session, 'evt_held' ) );
		$this->assertSame( Settlement::AMOUNT_MISMATCH, Settlement::apply( $order, $session, '' ) );

		wp_cache_flush();
		$stored = wc_get_order( $order->get_id() );
		$this->assertSame( 'on-hold', $stored->get_status() );
		$this->assertSame( '', $stored->get_transaction_id() );
		$this->assertNull( $stored->get_date_paid() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'ServicePay session ' . $session['id'] . ' (reference ' . $session['reference'] . ') ' . self::HELD_NOTE ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'check the amounts and refund or complete it by hand' ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Order status changed' ), 'the shop\'s own hold only' );
		// No status change, so no second "on hold" mail to the payer: the shop's own hold sent one.
		$this->assertSame( $mails, $this->mails_about( $stored ) );
		$this->assert_each_note_and_mail_once( $stored, count( $mails ) );
	}

	public function test_a_second_session_of_another_amount_for_an_order_its_first_one_held_gets_a_note_of_its_own(): void {
		$order = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$order->set_billing_email( 'held-twice-' . $order->get_id() . '@example.com' );
		$order->save();
		$first = $this->session_of( $order, 'successful', array( 'amount' => 2499 ) );
		$this->assertSame( Settlement::AMOUNT_MISMATCH, Settlement::apply( $order, $first, 'evt_first' ) );
		// The payer had opened a second attempt too and paid it with the same wrong amount.
		$order = wc_get_order( $order->get_id() );
		OrderSessions::remember( $order, array( 'id' => 'ses_' . wp_generate_password( 24, false ) ), 2 );
		$order->save();
		$second = $this->session_of( $order, 'successful', array( 'amount' => 2499 ) );

		$this->assertSame( Settlement::AMOUNT_MISMATCH, Settlement::apply( $order, $second, 'evt_second' ) );
		$this->assertSame( Settlement::AMOUNT_MISMATCH, Settlement::apply( $order, $second, 'evt_second' ) );
		$this->assertSame( Settlement::AMOUNT_MISMATCH, Settlement::apply( $order, $first, 'evt_first' ) );

		wp_cache_flush();
		$stored = wc_get_order( $order->get_id() );
		$this->assertSame( 'on-hold', $stored->get_status() );
		$this->assertSame( 2, $this->notes_containing( $order->get_id(), self::HELD_NOTE ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'ServicePay session ' . $first['id'] . ' ' ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'ServicePay session ' . $second['id'] . ' ' ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Pending payment to On hold' ) );
		$this->assert_each_note_and_mail_once( $stored, 2 );
	}

	public function test_four_concurrent_deliveries_of_it_write_the_note_once(): void {
		$order   = $this->held_order();
		$session = $this->session_of( $order, 'successful', array( 'amount' => 2499 ) );

		$results = Concurrently::run( 4, 'settle', $order->get_id(), array( wp_json_encode( $session ) ) );

		$this->assertSame( array( Settlement::AMOUNT_MISMATCH ), array_values( array_unique( array_column( $results, 'result' ) ) ) );
		wp_cache_flush();
		$this->assertSame( 'on-hold', wc_get_order( $order->get_id() )->get_status() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), self::HELD_NOTE ) );
	}

	public function test_a_return_racing_a_delivery_whose_note_the_database_refuses_writes_it_itself_once(): void {
		$order   = $this->held_order();
		$session = $this->session_of( $order, 'successful', array( 'amount' => 2499 ) );
		// The other request (the webhook) holds the hold claim and is about to write the note, which the database
		// then refuses after 1 s: it gives the claim back and is answered 500.
		$this->start_settler( $order, $session, 1000, 'amount-mismatch:' . $session['id'], 'fail-note' );

		// The payer's return waits for it rather than answer as if the note were written, and writes it itself.
		$this->assertSame( Settlement::AMOUNT_MISMATCH, Settlement::apply( $order, $session, '' ) );
		$this->assertSame( 'threw: The order could not be put on hold; it will be retried.', $this->finish_settler() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), self::HELD_NOTE ) );

		// The webhook's redelivery finds it written.
		$this->assertSame( Settlement::AMOUNT_MISMATCH, Settlement::apply( $order, $session, 'evt_slow' ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), self::HELD_NOTE ) );
		$this->assertSame( 'on-hold', $this->stored( $order )->get_status() );
	}

	public function test_a_note_the_database_refused_is_answered_for_a_retry_that_writes_it_once(): void {
		global $wpdb;
		$order   = $this->held_order();
		$session = $this->session_of( $order, 'successful', array( 'amount' => 2499 ) );
		$refused = 0;
		$refuse  = static function ( $query ) use ( &$refused, $wpdb ) {
			if ( 0 === $refused && is_string( $query ) && str_contains( $query, self::HELD_NOTE ) && preg_match( '/^\s*INSERT\s+INTO\s+`?' . preg_quote( $wpdb->comments, '/' ) . '\b/i', $query ) ) {
				++$refused;
				return 'SELECT 1 FROM servicepay_test_refused_statement';
			}
			return $query;
		};
		add_filter( 'query', $refuse );
		$shown = $wpdb->suppress_errors( true );
		try {
			$result = Settlement::apply( $order, $session, 'evt_refused' );
		} catch ( \RuntimeException $error ) {
			$result = $error;
		} finally {
			remove_filter( 'query', $refuse );
			$wpdb->suppress_errors( $shown );
		}
		$this->assertSame( 1, $refused );
		// The webhook answers 500 for this, so the service delivers again.
		$this->assertInstanceOf( \RuntimeException::class, $result );
		$this->assertSame( 0, $this->notes_containing( $order->get_id(), self::HELD_NOTE ) );
		$this->assertFalse( SettlementClaim::exists( 'amount-mismatch:' . $session['id'] ), 'the claim is given back for the retry' );

		$this->assertSame( Settlement::AMOUNT_MISMATCH, Settlement::apply( $order, $session, 'evt_refused' ) );
		$this->assertSame( Settlement::AMOUNT_MISMATCH, Settlement::apply( $order, $session, 'evt_refused' ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), self::HELD_NOTE ) );
		$this->assertSame( 'on-hold', wc_get_order( $order->get_id() )->get_status() );
	}
}
