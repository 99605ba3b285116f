<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests;

use ServicePay\WooCommerce\Webhooks\EndpointStore;
use ServicePay\WooCommerce\Webhooks\SignatureVerifier;

/**
 * Webhook deliveries signed as the service signs them, through WordPress's REST server (rest_do_request), with a
 * test endpoint secret stored for the test and the stored endpoints as they were afterwards.
 */
trait SignedWebhooks {

	/** @var mixed The stored endpoints before the test (null: none). */
	private $endpoints_before;

	/** In setUp(): a test endpoint whose secret signs the deliveries. */
	private function use_test_endpoint(): void {
		$this->endpoints_before = get_option( EndpointStore::OPTION, null );
		EndpointStore::put( 'test', 'we_phpunit', rest_url( 'servicepay/v1/webhook' ), self::webhook_secret() );
	}

	/** In tearDown(): the stored endpoints as they were. */
	private function drop_test_endpoint(): void {
		null === $this->endpoints_before ? delete_option( EndpointStore::OPTION ) : update_option( EndpointStore::OPTION, $this->endpoints_before, false );
	}

	/** The test endpoint's signing secret. */
	private static function webhook_secret(): string {
		return 'whsec_phpunit00000000000000000000000';
	}

	/**
	 * An event body carrying a session, with an event id of its own.
	 *
	 * @param array<string,mixed> $session Session.
	 */
	private function event_of( array $session ): string {
		return (string) wp_json_encode(
			array(
				'id'          => 'evt_' . wp_generate_password( 24, false ),
				'type'        => 'session.' . $session['status'],
				'environment' => 'test',
				'createdAt'   => gmdate( 'c' ),
				'data'        => array( 'session' => $session ),
			)
		);
	}

	/**
	 * Delivers a body signed now (as a delivery, a redelivery or the portal's "Resend" is); answers its status
	 * and body.
	 *
	 * @param string $body Body.
	 * @return array{0:int,1:array<string,mixed>}
	 */
	private function deliver_signed( string $body ): array {
		$request = new \WP_REST_Request( 'POST', '/servicepay/v1/webhook' );
		$request->set_header( 'content-type', 'application/json' );
		$request->set_header( 'x-service-signature', SignatureVerifier::sign( $body, self::webhook_secret(), time() ) );
		$request->set_body( $body );
		$response = rest_do_request( $request );
		return array( $response->get_status(), (array) $response->get_data() );
	}

	/**
	 * The parts of a 200 answer a test compares.
	 *
	 * @param array{0:int,1:array<string,mixed>} $answer Status and body.
	 * @return array{0:int,1:mixed,2:mixed}
	 */
	private function received( array $answer ): array {
		return array( $answer[0], $answer[1]['received'] ?? null, $answer[1]['result'] ?? null );
	}
}
