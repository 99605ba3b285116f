<?php
/**
 * `POST /wp-json/servicepay/v1/webhook`: the service's signed events.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Webhooks;

use ServicePay\WooCommerce\Logger;
use ServicePay\WooCommerce\Orders\OrderSessions;
use ServicePay\WooCommerce\Orders\Refunds;
use ServicePay\WooCommerce\Orders\Settlement;

defined( 'ABSPATH' ) || exit;

/**
 * Verified on the raw body before anything reads it. WordPress's REST server parses a JSON body while it
 * matches a route (a malformed body would get its 400 before any permission check), so the route is answered
 * from `rest_pre_dispatch`, which runs first; it is also registered, so it is listed and other methods get
 * WordPress's usual answers.
 *
 * Answers: 401 bad or missing signature (nothing changes); 400 a signed body that is not an event; 200 for
 * everything handled, including events this shop does not know (a retry would not change that); 500 when the
 * database failed, or when another request holds the paid session's claim and the order is still unpaid (it may
 * yet fail), so the service delivers again.
 */
final class WebhookController {

	public const ROUTE = '/servicepay/v1/webhook';

	/** Hooks the route. */
	public static function register(): void {
		add_filter( 'rest_pre_dispatch', array( self::class, 'pre_dispatch' ), 10, 3 );
		add_action(
			'rest_api_init',
			static function (): void {
				register_rest_route(
					'servicepay/v1',
					'/webhook',
					array(
						'methods'             => 'POST',
						'callback'            => array( self::class, 'handle' ),
						'permission_callback' => '__return_true', // The signature is the authentication.
					)
				);
			}
		);
	}

	/**
	 * Answers the webhook before WordPress parses its body.
	 *
	 * @param mixed            $result  Earlier filter's answer.
	 * @param \WP_REST_Server  $server  Server.
	 * @param \WP_REST_Request $request Request.
	 * @return mixed
	 */
	public static function pre_dispatch( $result, $server, $request ) {
		if ( null !== $result || ! $request instanceof \WP_REST_Request ) {
			return $result;
		}
		if ( self::ROUTE !== untrailingslashit( $request->get_route() ) || 'POST' !== $request->get_method() ) {
			return $result;
		}
		return self::handle( $request );
	}

	/**
	 * Verifies, then applies the event.
	 *
	 * @param \WP_REST_Request $request Request.
	 */
	public static function handle( \WP_REST_Request $request ): \WP_REST_Response {
		$raw    = (string) $request->get_body();
		$header = (string) $request->get_header( 'x_service_signature' );
		try {
			SignatureVerifier::verify( $raw, $header, array_values( EndpointStore::secrets() ), time() );
		} catch ( SignatureException $error ) {
			Logger::warning( 'webhook refused', array( 'code' => $error->code_name ) );
			return self::answer( 401, array( 'code' => 'servicepay_' . $error->code_name, 'message' => $error->getMessage() ) );
		}

		$event   = json_decode( $raw, true );
		$session = is_array( $event ) && is_array( $event['data']['session'] ?? null ) ? $event['data']['session'] : null;
		if ( null === $session || ! is_string( $event['id'] ?? null ) || ! is_string( $session['id'] ?? null ) ) {
			return self::answer( 400, array( 'code' => 'servicepay_not_an_event', 'message' => 'The signed body is not a ServicePay event.' ) );
		}
		$order_id = (int) ( $session['metadata']['wc_order_id'] ?? 0 );
		$order    = $order_id > 0 ? wc_get_order( $order_id ) : false;
		if ( ! $order instanceof \WC_Order || ! OrderSessions::owns( $order, $session['id'] ) ) {
			Logger::info( 'webhook for no order of this shop', array( 'eventId' => $event['id'], 'sessionId' => $session['id'] ) );
			return self::answer( 200, array( 'received' => true, 'result' => Settlement::IGNORED ) );
		}
		$type = is_string( $event['type'] ?? null ) ? $event['type'] : '';
		try {
			$result = str_starts_with( $type, 'refund.' ) ? Refunds::on_event( $order, $event ) : Settlement::apply( $order, $session, $event['id'] );
		} catch ( \Throwable $error ) {
			Logger::error( 'webhook could not be applied', array( 'eventId' => $event['id'], 'orderId' => $order_id, 'error' => $error->getMessage() ) );
			return self::answer( 500, array( 'code' => 'servicepay_retry', 'message' => 'Not applied; deliver again.' ) );
		}
		if ( Settlement::ALREADY_PAID === $result && ! str_starts_with( $type, 'refund.' ) && Settlement::awaits_payment( $order_id ) ) {
			// Another request holds the session's claim and had not paid the order when this one stopped waiting;
			// it may yet fail and give the claim back. A 200 would end the deliveries with the order unpaid.
			Logger::warning( 'webhook found the order claimed but not paid', array( 'eventId' => $event['id'], 'orderId' => $order_id ) );
			return self::answer( 500, array( 'code' => 'servicepay_retry', 'message' => 'Not applied yet; deliver again.' ) );
		}
		Logger::info( 'webhook applied', array( 'eventId' => $event['id'], 'orderId' => $order_id, 'result' => $result ) );
		return self::answer( 200, array( 'received' => true, 'result' => $result ) );
	}

	/**
	 * A JSON answer.
	 *
	 * @param int                 $status Status.
	 * @param array<string,mixed> $body   Body.
	 */
	private static function answer( int $status, array $body ): \WP_REST_Response {
		$response = new \WP_REST_Response( $body, $status );
		$response->header( 'Cache-Control', 'no-store' );
		return $response;
	}
}
