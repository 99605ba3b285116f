<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Webhooks;

use ServicePay\WooCommerce\Tests\WordPressTestCase;
use ServicePay\WooCommerce\Webhooks\EndpointStore;
use ServicePay\WooCommerce\Webhooks\SignatureVerifier;

/**
 * Through WordPress's REST server (rest_do_request), as a delivery arrives.
 *
 * @group wordpress
 */
final class WebhookControllerTest extends WordPressTestCase {

	private const SECRET = 'whsec_phpunit00000000000000000000000';

	/** @var mixed */
	private $saved_endpoints;

	protected function setUp(): void {
		parent::setUp();
		$this->saved_endpoints = get_option( EndpointStore::OPTION, null );
		EndpointStore::put( 'test', 'we_phpunit', rest_url( 'servicepay/v1/webhook' ), self::SECRET );
	}

	protected function tearDown(): void {
		null === $this->saved_endpoints ? delete_option( EndpointStore::OPTION ) : update_option( EndpointStore::OPTION, $this->saved_endpoints, false );
		parent::tearDown();
	}

	private function deliver( string $body, ?string $header ): \WP_REST_Response {
		$request = new \WP_REST_Request( 'POST', '/servicepay/v1/webhook' );
		$request->set_header( 'content-type', 'application/json' );
		if ( null !== $header ) {
			$request->set_header( 'x-service-signature', $header );
		}
		$request->set_body( $body );
		return rest_do_request( $request );
	}

	private function event_for( \WC_Order $order, string $status = 'successful' ): string {
		return (string) wp_json_encode(
			array(
				'id'          => 'evt_' . wp_generate_password( 24, false ),
				'type'        => 'session.' . $status,
				'environment' => 'test',
				'createdAt'   => gmdate( 'c' ),
				'data'        => array( 'session' => $this->session_of( $order, $status ) ),
			)
		);
	}

	public function test_the_stored_secret_is_sealed_not_in_the_clear(): void {
		$raw = (string) wp_json_encode( get_option( EndpointStore::OPTION ) );
		$this->assertStringNotContainsString( self::SECRET, $raw );
		$this->assertSame( array( 'test' => self::SECRET ), array_intersect_key( EndpointStore::secrets(), array( 'test' => 1 ) ) );
	}

	public function test_bad_signatures_get_401_and_change_nothing(): void {
		$order = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$body  = $this->event_for( $order );
		$cases = array(
			'no header'      => null,
			'another secret' => SignatureVerifier::sign( $body, 'whsec_other', time() ),
			'too old'        => SignatureVerifier::sign( $body, self::SECRET, time() - 301 ),
			'body altered'   => SignatureVerifier::sign( str_replace( '2500', '2501', $body ), self::SECRET, time() ),
		);
		foreach ( $cases as $label => $header ) {
			$response = $this->deliver( $body, $header );
			$this->assertSame( 401, $response->get_status(), $label );
		}
		// Not JSON at all, unsigned: still 401 (the signature is checked before the body is read).
		$this->assertSame( 401, $this->deliver( '{not json', 't=1,v1=' . str_repeat( '0', 64 ) )->get_status() );
		$fresh = wc_get_order( $order->get_id() );
		$this->assertSame( 'pending', $fresh->get_status() );
		$this->assertSame( '', $fresh->get_transaction_id() );
	}

	public function test_a_signed_event_settles_and_its_replay_changes_nothing(): void {
		$order  = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$saved  = wc_get_order( $order->get_id() );
		// Should the stack's database drop a write, this says so here rather than as a settlement result.
		$this->assertSame( array( 2500, 'USD' ), array( \ServicePay\WooCommerce\Money::to_minor( (string) $saved->get_total( 'edit' ), 'USD' ), $saved->get_currency() ), 'the order as stored' );
		$body   = $this->event_for( $order );
		$first  = $this->deliver( $body, SignatureVerifier::sign( $body, self::SECRET, time() ) );
		$replay = $this->deliver( $body, SignatureVerifier::sign( $body, self::SECRET, time() ) );
		$this->assertSame( array( 200, 'settled' ), array( $first->get_status(), $first->get_data()['result'] ) );
		$this->assertSame( array( 200, 'already_paid' ), array( $replay->get_status(), $replay->get_data()['result'] ) );
		$this->assertSame( 'processing', wc_get_order( $order->get_id() )->get_status() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'received by bank transfer' ) );
	}

	public function test_a_signed_body_that_is_not_an_event_gets_400_and_an_unknown_order_200(): void {
		$body = '{"hello":"world"}';
		$this->assertSame( 400, $this->deliver( $body, SignatureVerifier::sign( $body, self::SECRET, time() ) )->get_status() );
		$unknown = (string) wp_json_encode(
			array(
				'id'   => 'evt_x',
				'type' => 'session.successful',
				'data' => array( 'session' => array( 'id' => 'ses_unknown', 'status' => 'successful', 'metadata' => array( 'wc_order_id' => '999999' ) ) ),
			)
		);
		$response = $this->deliver( $unknown, SignatureVerifier::sign( $unknown, self::SECRET, time() ) );
		$this->assertSame( array( 200, 'ignored' ), array( $response->get_status(), $response->get_data()['result'] ) );
	}
}
