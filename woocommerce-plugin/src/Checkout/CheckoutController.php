<?php
/**
 * The checkout's REST routes: open a session for an order, confirm it after the widget.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Checkout;

use ServicePay\WooCommerce\Api\ApiClient;
use ServicePay\WooCommerce\Api\ApiException;
use ServicePay\WooCommerce\Logger;
use ServicePay\WooCommerce\Orders\OrderSessions;
use ServicePay\WooCommerce\Settings;

defined( 'ABSPATH' ) || exit;

/**
 * `POST /wp-json/servicepay/v1/orders/{id}/session` and `…/confirm`, body `{ key, nonce }`.
 *
 * Who may ask: the holder of the order's key (WooCommerce's own proof on the order-pay and order-received
 * pages) with this checkout's nonce (tied to the WooCommerce session for guests, to the user otherwise); an
 * order of a customer account only for that customer. The amount is never taken from the request.
 */
final class CheckoutController {

	public const NAMESPACE    = 'servicepay/v1';
	// WooCommerce ties nonces of actions named woocommerce… to a guest's cart session (not to "user 0").
	public const NONCE_ACTION = 'woocommerce-servicepay-checkout';

	/** Hooks the routes. */
	public static function register(): void {
		add_action(
			'rest_api_init',
			static function (): void {
				$args = array(
					'key'   => array(
						'type'     => 'string',
						'required' => true,
					),
					'nonce' => array(
						'type'     => 'string',
						'required' => true,
					),
				);
				register_rest_route(
					self::NAMESPACE,
					'/orders/(?P<order_id>\d+)/session',
					array(
						'methods'             => 'POST',
						'callback'            => array( self::class, 'session' ),
						'permission_callback' => '__return_true', // Checked in the handler: nonce, then the order's key.
						'args'                => $args,
					)
				);
				register_rest_route(
					self::NAMESPACE,
					'/orders/(?P<order_id>\d+)/confirm',
					array(
						'methods'             => 'POST',
						'callback'            => array( self::class, 'confirm' ),
						'permission_callback' => '__return_true',
						'args'                => $args,
					)
				);
			}
		);
	}

	/**
	 * Opens a session for the order's total.
	 *
	 * @param \WP_REST_Request $request Request.
	 * @return \WP_REST_Response|\WP_Error
	 */
	public static function session( \WP_REST_Request $request ) {
		$order = self::authorised_order( $request );
		if ( is_wp_error( $order ) ) {
			return $order;
		}
		if ( ! $order->needs_payment() ) {
			// Paid, or on hold (paid with another total: the order-received page explains), or ended: no new
			// session, and the page is told which, never "paid" for an order that is not.
			return new \WP_REST_Response( self::order_state( $order ), 200 );
		}
		$settings = Settings::load();
		if ( ! $settings->is_ready() ) {
			return new \WP_Error( 'servicepay_not_configured', __( 'Bank transfer payments are not available right now. Please choose another payment method.', 'servicepay-woocommerce' ), array( 'status' => 503 ) );
		}
		try {
			$started = ( new SessionStarter( $settings, new ApiClient( $settings->api_url(), $settings->secret_key() ) ) )->start( $order );
		} catch ( ApiException $error ) {
			Logger::error( 'session create failed', array( 'orderId' => $order->get_id(), 'code' => $error->error_code, 'requestId' => $error->request_id ) );
			$status = 0 === $error->status || $error->status >= 500 ? 502 : 400;
			return new \WP_Error( 'servicepay_' . $error->error_code, self::payer_message( $error ), array( 'status' => $status ) );
		} catch ( \InvalidArgumentException $error ) {
			return new \WP_Error( 'servicepay_amount', __( 'This order total cannot be paid by bank transfer.', 'servicepay-woocommerce' ), array( 'status' => 400 ) );
		}
		if ( $started['paid'] ) {
			// An earlier attempt turned out paid and was settled now: say what the order is.
			return new \WP_REST_Response( self::order_state( self::fresh( $order ) ), 200 );
		}
		$started['redirect']        = $order->get_checkout_order_received_url();
		$started['orderStatus']     = $order->get_status();
		$started['widgetScriptUrl'] = $settings->widget_script_url( (string) $started['environment'] );
		return new \WP_REST_Response( $started, 200 );
	}

	/**
	 * After the widget ended (paid, cancelled, ran out, failed): asks the service, settles, and tells the page
	 * what is true of the order now: `{ paid, orderStatus, sessionStatus, redirect }`. `paid` only for an order
	 * WooCommerce counts as paid (processing, completed): one put on hold is not.
	 *
	 * @param \WP_REST_Request $request Request.
	 * @return \WP_REST_Response|\WP_Error
	 */
	public static function confirm( \WP_REST_Request $request ) {
		$order = self::authorised_order( $request );
		if ( is_wp_error( $order ) ) {
			return $order;
		}
		// '' when the service could not be asked: the page then treats the payment as not (yet) confirmed.
		$status = SessionConfirmer::confirm( $order );
		return new \WP_REST_Response( array( 'sessionStatus' => $status ) + self::order_state( self::fresh( $order ) ), 200 );
	}

	/**
	 * What the checkout scripts are told of an order: whether it is paid, its status, and its page.
	 *
	 * @param \WC_Order $order Order.
	 * @return array{paid:bool,orderStatus:string,redirect:string}
	 */
	private static function order_state( \WC_Order $order ): array {
		return array(
			'paid'        => $order->is_paid(),
			'orderStatus' => $order->get_status(),
			'redirect'    => $order->get_checkout_order_received_url(),
		);
	}

	/**
	 * The order as the database holds it now (a settlement in this request may have changed it).
	 *
	 * @param \WC_Order $order Order.
	 */
	private static function fresh( \WC_Order $order ): \WC_Order {
		$fresh = wc_get_order( $order->get_id() );
		return $fresh instanceof \WC_Order ? $fresh : $order;
	}

	/**
	 * The order, if the request may act on it.
	 *
	 * @param \WP_REST_Request $request Request.
	 * @return \WC_Order|\WP_Error
	 */
	private static function authorised_order( \WP_REST_Request $request ) {
		// WordPress's REST API does not load WooCommerce's session; a guest's nonce is tied to it.
		if ( function_exists( 'WC' ) && null === WC()->session ) {
			WC()->initialize_session();
		}
		if ( ! wp_verify_nonce( (string) $request->get_param( 'nonce' ), self::NONCE_ACTION ) ) {
			return new \WP_Error( 'servicepay_invalid_nonce', __( 'Your checkout page is out of date. Please reload it and try again.', 'servicepay-woocommerce' ), array( 'status' => 403 ) );
		}
		$order = wc_get_order( (int) $request->get_param( 'order_id' ) );
		$key   = (string) $request->get_param( 'key' );
		// The same answer for "no such order" and "not yours", so ids cannot be probed.
		$refused = new \WP_Error( 'servicepay_order_not_found', __( 'We could not find that order.', 'servicepay-woocommerce' ), array( 'status' => 404 ) );
		if ( ! $order instanceof \WC_Order || '' === $key || ! hash_equals( $order->get_order_key(), $key ) ) {
			return $refused;
		}
		if ( $order->get_customer_id() > 0 && $order->get_customer_id() !== get_current_user_id() ) {
			return $refused;
		}
		if ( ! OrderSessions::is_ours( $order ) ) {
			return new \WP_Error( 'servicepay_wrong_method', __( 'This order is not paid by bank transfer.', 'servicepay-woocommerce' ), array( 'status' => 409 ) );
		}
		return $order;
	}

	/**
	 * What a payer is told when the service refused (details go to the log, not the page).
	 *
	 * @param ApiException $error Error.
	 */
	private static function payer_message( ApiException $error ): string {
		if ( 'unsupported_currency' === $error->error_code || 'amount_out_of_range' === $error->error_code ) {
			return __( 'Bank transfer cannot be used for this order total or currency. Please choose another payment method.', 'servicepay-woocommerce' );
		}
		return __( 'Bank transfer payments are not available right now. Please try again in a moment or choose another payment method.', 'servicepay-woocommerce' );
	}
}
