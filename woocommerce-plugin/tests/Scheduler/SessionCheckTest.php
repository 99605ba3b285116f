<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Scheduler;

use ServicePay\WooCommerce\Orders\Settlement;
use ServicePay\WooCommerce\Orders\SettlementClaim;
use ServicePay\WooCommerce\Scheduler\SessionCheck;
use ServicePay\WooCommerce\Tests\StubService;
use ServicePay\WooCommerce\Tests\WordPressTestCase;

/**
 * The scheduled check, run as Action Scheduler would run it, asking a stub service (through
 * `pre_http_request`) that answers the order's session as paid.
 *
 * @group wordpress
 */
final class SessionCheckTest extends WordPressTestCase {

	use StubService;

	private ?\WC_Order $order = null;

	protected function setUp(): void {
		parent::setUp();
		$this->use_stub_service();
	}

	protected function tearDown(): void {
		$this->drop_stub_service();
		if ( null !== $this->order ) {
			as_unschedule_all_actions( SessionCheck::HOOK, array( 'order_id' => $this->order->get_id() ), SessionCheck::GROUP );
		}
		parent::tearDown();
	}

	/**
	 * The stub service: `GET /api/widget/sessions/{id}` answers the order's session, paid.
	 *
	 * @param mixed               $pre  Earlier answer.
	 * @param array<string,mixed> $args Request.
	 * @param string              $url  URL.
	 * @return mixed
	 */
	public function service( $pre, $args, $url ) {
		if ( ! str_starts_with( $url, 'http://servicepay.invalid/' ) ) {
			return $pre;
		}
		return array(
			'headers'  => array(),
			'body'     => (string) wp_json_encode( array( 'data' => $this->session_of( $this->order, 'successful' ) ) ),
			'response' => array(
				'code'    => 200,
				'message' => 'OK',
			),
			'cookies'  => array(),
		);
	}

	/** When the order's next check is due (0: none is waiting). */
	private function next_check(): int {
		$next = as_next_scheduled_action( SessionCheck::HOOK, array( 'order_id' => $this->order->get_id() ), SessionCheck::GROUP );
		return is_int( $next ) ? $next : 0;
	}

	/**
	 * What the unpaid order carries of a payment: the session's id as its transaction id (typed into the order
	 * screen, or left by a save whose status write the database lost: on posts storage the id is meta of its
	 * own), a date paid (left by such a save under HPOS, which stores it in another table than the status).
	 * WooCommerce still does not count it paid.
	 *
	 * @return array<string,array{0:bool,1:bool}>
	 */
	public function leftovers(): array {
		return array(
			'nothing'                           => array( false, false ),
			'the session as its transaction id' => array( true, false ),
			'a date paid'                       => array( false, true ),
		);
	}

	/**
	 * @dataProvider leftovers
	 */
	public function test_a_paid_session_whose_claim_another_request_still_holds_is_checked_again_and_then_settled_once( bool $recorded, bool $dated ): void {
		global $wpdb;
		$this->order = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$session_id  = (string) $this->order->get_meta( '_servicepay_session_id' );
		if ( $recorded ) {
			$this->order->set_transaction_id( $session_id );
		}
		if ( $dated ) {
			$this->order->set_date_paid( time() - 5 );
		}
		$this->order->save();
		$this->assertFalse( wc_get_order( $this->order->get_id() )->is_paid() );
		// Simulated: another request claimed the session ten seconds ago (past the 2 s a request waits for it)
		// and has not stored anything yet; it may still fail and give the claim back.
		$claim = 'session-paid:' . $session_id;
		$this->assertTrue( SettlementClaim::take( $claim, $this->order->get_id() ) );
		$wpdb->update( SettlementClaim::table(), array( 'created_at' => gmdate( 'Y-m-d H:i:s', time() - 10 ) ), array( 'claim_key' => $claim ) );
		$this->assertSame( 0, $this->next_check() );

		SessionCheck::run( $this->order->get_id() );

		// The session is paid but the order is not: the check comes back in ten minutes instead of stopping.
		wp_cache_flush();
		$this->assertSame( 'pending', wc_get_order( $this->order->get_id() )->get_status() );
		$this->assertEqualsWithDelta( time() + 600, $this->next_check(), 5 );

		// The holder gave up (its claims back, the order unchanged): the next check settles the order once,
		// and, the order paid, schedules no further check.
		SettlementClaim::release( $claim );
		as_unschedule_all_actions( SessionCheck::HOOK, array( 'order_id' => $this->order->get_id() ), SessionCheck::GROUP );
		SessionCheck::run( $this->order->get_id() );
		wp_cache_flush();
		$stored = wc_get_order( $this->order->get_id() );
		$this->assertSame( 'processing', $stored->get_status() );
		$this->assertSame( $session_id, $stored->get_transaction_id() );
		$this->assertSame( 1, $this->notes_containing( $this->order->get_id(), 'received by bank transfer' ) );
		$this->assertSame( 4, $this->stock_of( $this->order ) );
		$this->assertSame( 0, $this->next_check() );
	}

	public function test_a_check_of_a_paid_order_the_shop_set_back_to_pending_settles_nothing_and_stops(): void {
		$this->order = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$this->assertSame( Settlement::SETTLED, Settlement::apply( $this->order, $this->session_of( $this->order, 'successful' ) ) );
		// The shop owner sets the paid order back to pending; a check (the order needs payment again) runs three
		// minutes on, past the two minutes after which a claim whose holder never finished is taken over.
		wc_get_order( $this->order->get_id() )->update_status( 'pending', '', true );
		$this->age_claims( $this->order->get_id(), 180 );
		$before = $this->seen( $this->order );
		$this->assertSame( 'pending', $before['status'] );

		SessionCheck::run( $this->order->get_id() );

		// The session's payment settled the order once already: no note, stock change or mail, the status the shop
		// owner chose, and no further check (nothing will change).
		$this->assertSame( $before, $this->seen( $this->order ) );
		$this->assertSame( 0, $this->next_check() );
	}

	public function test_a_check_after_a_settlement_whose_paid_status_the_database_lost_stores_it_without_a_second_note_or_mail(): void {
		$this->order = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$email       = 'check-' . $this->order->get_id() . '@example.com';
		$this->order->set_billing_email( $email );
		$this->order->save();
		$session = $this->session_of( $this->order, 'successful' );
		// An earlier request (a webhook the service then stopped delivering, say) settled the order, and the
		// database lost the paid status, written twice: WooCommerce had written its notes, sent its mails and
		// reduced the stock; the settlement gave its claims back.
		[ $result ] = $this->with_status_dropped( 'processing', 100, fn () => Settlement::apply( $this->order, $session, 'evt_lost' ) );
		$this->assertInstanceOf( \RuntimeException::class, $result );
		wp_cache_flush();
		$this->assertSame( 'pending', wc_get_order( $this->order->get_id() )->get_status() );

		SessionCheck::run( $this->order->get_id() );

		// The check stores the paid status alone: one payment note, one of each mail, and no further check.
		$this->assert_paid_once( $this->order, $session, $email );
		$this->assertSame( 0, $this->next_check() );
	}
}
