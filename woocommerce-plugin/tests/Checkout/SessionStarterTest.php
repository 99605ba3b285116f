<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Checkout;

use ServicePay\WooCommerce\Api\ApiClient;
use ServicePay\WooCommerce\Checkout\SessionStarter;
use ServicePay\WooCommerce\Orders\Settlement;
use ServicePay\WooCommerce\Settings;
use ServicePay\WooCommerce\Tests\StubService;
use ServicePay\WooCommerce\Tests\WordPressTestCase;

/**
 * What the payer's "Place order" (or the order-pay page's button) does when the order's previous session turns
 * out paid, asking a stub service (through `pre_http_request`) that answers that session as paid and makes a
 * new one on request.
 *
 * @group wordpress
 */
final class SessionStarterTest extends WordPressTestCase {

	use StubService;

	private ?\WC_Order $order = null;

	/** @var string[] The requests the stub service was asked, "METHOD path". */
	private array $asked = array();

	protected function setUp(): void {
		parent::setUp();
		$this->use_stub_service();
	}

	protected function tearDown(): void {
		$this->drop_stub_service();
		if ( null !== $this->order ) {
			as_unschedule_all_actions( 'servicepay_check_order', array( 'order_id' => $this->order->get_id() ), 'servicepay' );
		}
		parent::tearDown();
	}

	/**
	 * The stub service: the order's first session is paid; `POST /api/widget/sessions` makes `ses_next…`.
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
		$path          = (string) wp_parse_url( $url, PHP_URL_PATH );
		$this->asked[] = $args['method'] . ' ' . $path;
		$created       = 'POST' === $args['method'] && '/api/widget/sessions' === $path;
		$session       = $created
			? array(
				'id'           => 'ses_next' . $this->order->get_id(),
				'clientSecret' => 'cs_test_phpunit',
				'reference'    => 'ref-next',
				'status'       => 'pending',
				'environment'  => 'test',
				'expiresAt'    => gmdate( 'c', time() + 7200 ),
			)
			: $this->session_of( $this->order, 'successful' );
		return array(
			'headers'  => array(),
			'body'     => (string) wp_json_encode( array( 'data' => $session ) ),
			'response' => array(
				'code'    => $created ? 201 : 200,
				'message' => 'OK',
			),
			'cookies'  => array(),
		);
	}

	private function starter(): SessionStarter {
		$settings = Settings::load();
		return new SessionStarter( $settings, new ApiClient( $settings->api_url(), $settings->secret_key() ) );
	}

	public function test_a_previous_session_found_paid_settles_the_order_and_opens_none(): void {
		// The webhook was missed: the payer presses "Place order" again and the previous session turns out paid.
		$this->order = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );

		$this->assertSame( array( 'paid' => true ), $this->starter()->start( $this->order ) );
		$this->assertSame( 'processing', $this->seen( $this->order )['status'] );
		$this->assertNotContains( 'POST /api/widget/sessions', $this->asked );
	}

	public function test_a_paid_order_the_shop_set_back_to_pending_gets_a_new_session_and_is_not_settled_again(): void {
		$this->order = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$first       = $this->session_of( $this->order, 'successful' );
		$this->assertSame( Settlement::SETTLED, Settlement::apply( $this->order, $first ) );
		// The shop owner sets it back to pending and asks the payer to pay again; three minutes on, the payer does.
		wc_get_order( $this->order->get_id() )->update_status( 'pending', '', true );
		$this->age_claims( $this->order->get_id(), 180 );
		$before = $this->seen( $this->order );

		$started = $this->starter()->start( wc_get_order( $this->order->get_id() ) );

		// The paid session is spent: a new one is opened, and the order is not settled by the old one again.
		$this->assertFalse( $started['paid'] );
		$this->assertSame( 'ses_next' . $this->order->get_id(), $started['sessionId'] );
		$this->assertContains( 'POST /api/widget/sessions', $this->asked );
		$after = $this->seen( $this->order );
		$this->assertSame( 'pending', $after['status'] );
		$this->assertSame( $before['stock'], $after['stock'] );
		$this->assertSame( $before['mails'], $after['mails'] );
		$this->assertSame( 1, $this->notes_containing( $this->order->get_id(), 'received by bank transfer' ) );
		$this->assertSame( 1, $this->notes_containing( $this->order->get_id(), 'ServicePay session ses_next' . $this->order->get_id() . ' opened' ) );
		$this->assertSame( 'ses_next' . $this->order->get_id(), wc_get_order( $this->order->get_id() )->get_meta( '_servicepay_session_id' ) );
	}
}
