<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests;

use ServicePay\WooCommerce\Checkout\SessionConfirmer;
use ServicePay\WooCommerce\Orders\OrderSessions;
use ServicePay\WooCommerce\Plugin;

/**
 * WooCommerce's unpaid-order timer asks `woocommerce_cancel_unpaid_order` about each order it would cancel
 * (with true); the plugin answers from the session as the service describes it, answered here by a stub.
 *
 * @group wordpress
 */
final class PluginTest extends WordPressTestCase {

	use StubService;

	/**
	 * What the stub service answers for a session: its status, or null for "cannot be reached".
	 *
	 * @var string|null
	 */
	private ?string $status = 'awaiting_payment';

	/**
	 * Paths the stub service was asked for.
	 *
	 * @var string[]
	 */
	private array $asked = array();

	private ?\WC_Order $order = null;

	protected function setUp(): void {
		parent::setUp();
		$this->use_stub_service();
	}

	protected function tearDown(): void {
		$this->drop_stub_service();
		parent::tearDown();
	}

	/**
	 * The stub service: `GET /api/widget/sessions/{id}` answers the order's session with $this->status.
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
		$this->asked[] = (string) wp_parse_url( $url, PHP_URL_PATH );
		if ( null === $this->status ) {
			return new \WP_Error( 'http_request_failed', 'Connection refused' );
		}
		return array(
			'headers'  => array(),
			'body'     => (string) wp_json_encode( array( 'data' => $this->session_of( $this->order, $this->status ) ) ),
			'response' => array(
				'code'    => 200,
				'message' => 'OK',
			),
			'cookies'  => array(),
		);
	}

	private function ask_timer( \WC_Order $order, bool $cancel = true ): bool {
		$this->order = $order;
		return (bool) apply_filters( 'woocommerce_cancel_unpaid_order', $cancel, wc_get_order( $order->get_id() ) );
	}

	private function open_order(): \WC_Order {
		return $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
	}

	public function test_an_order_whose_session_is_open_is_kept(): void {
		foreach ( array( 'pending', 'awaiting_payment', 'mismatch' ) as $status ) {
			$this->status = $status;
			$order        = $this->open_order();
			$this->assertFalse( $this->ask_timer( $order ), "session $status" );
			$this->assertSame( 'pending', wc_get_order( $order->get_id() )->get_status() );
		}
	}

	public function test_an_order_whose_session_was_paid_is_kept_and_marked_paid(): void {
		$this->status = 'successful';
		$order        = $this->open_order();
		$this->assertFalse( $this->ask_timer( $order ) );
		$this->assertSame( 'processing', wc_get_order( $order->get_id() )->get_status() );
	}

	public function test_an_order_whose_session_ended_unpaid_may_be_cancelled(): void {
		foreach ( array( 'cancelled', 'expired' ) as $status ) {
			$this->status = $status;
			$this->assertTrue( $this->ask_timer( $this->open_order() ), "session $status" );
		}
	}

	public function test_when_the_service_cannot_be_asked_an_order_is_kept_until_its_session_ends(): void {
		$this->status = null;
		$order        = $this->open_order();
		$this->assertFalse( $this->ask_timer( $order ) );
		$this->assertNotEmpty( $this->asked );

		$order->update_meta_data( OrderSessions::EXPIRES_AT, gmdate( 'c', time() - 60 ) );
		$order->save();
		$this->assertTrue( $this->ask_timer( $order ) );
	}

	public function test_a_paid_status_the_database_keeps_dropping_leaves_the_payers_page_working_and_the_order_payable_for_the_retry(): void {
		$this->status = 'successful';
		$order        = $this->open_order();
		$this->order  = $order;
		// The order-received page, the confirm route and the scheduled check all ask through SessionConfirmer: a
		// status the database will not keep must not end the payer's page in a fatal error.
		[ $answer, $dropped ] = $this->with_status_dropped( 'processing', 100, static fn () => SessionConfirmer::confirm( wc_get_order( $order->get_id() ) ) );
		$this->assertSame( '', $answer, 'an outcome not stored reads as "not confirmed", not as a thrown error' );
		$this->assertGreaterThan( 0, $dropped );
		wp_cache_flush();
		$this->assertSame( 'pending', wc_get_order( $order->get_id() )->get_status() );

		// The claim was given back: the next ask (the webhook's retry, the next scheduled check) settles it.
		$this->assertSame( 'successful', SessionConfirmer::confirm( wc_get_order( $order->get_id() ) ) );
		wp_cache_flush();
		$this->assertSame( 'processing', wc_get_order( $order->get_id() )->get_status() );
	}

	public function test_other_orders_keep_woocommerces_answer_without_asking_the_service(): void {
		$cod = $this->open_order();
		$cod->set_payment_method( 'cod' );
		$cod->save();
		$this->assertTrue( $this->ask_timer( $cod ) );

		$no_session = $this->open_order();
		$no_session->delete_meta_data( OrderSessions::SESSION_ID );
		$no_session->save();
		$this->assertTrue( $this->ask_timer( $no_session ) );

		// WooCommerce 9.4 passes false for orders not placed by the classic checkout: nothing to keep.
		$this->assertFalse( $this->ask_timer( $this->open_order(), false ) );
		$this->assertSame( array(), $this->asked );
	}
}
