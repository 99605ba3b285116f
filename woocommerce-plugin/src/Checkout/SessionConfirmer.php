<?php
/**
 * Asks the service about an order's session and settles it when paid.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Checkout;

use ServicePay\WooCommerce\Api\ApiClient;
use ServicePay\WooCommerce\Api\ApiException;
use ServicePay\WooCommerce\Logger;
use ServicePay\WooCommerce\Orders\OrderSessions;
use ServicePay\WooCommerce\Orders\Settlement;
use ServicePay\WooCommerce\Settings;

defined( 'ABSPATH' ) || exit;

/**
 * The return from the widget, the order-received page, the scheduled check and the unpaid-order timer do not
 * trust the browser or wait for a webhook: they read the session from the service with the secret key.
 */
final class SessionConfirmer {

	/**
	 * The session's status after applying it ('' when the order has none, the service could not be asked, or
	 * the order's new status could not be stored).
	 *
	 * @param \WC_Order $order Order.
	 */
	public static function confirm( \WC_Order $order ): string {
		$session_id = OrderSessions::current( $order );
		if ( '' === $session_id || ! OrderSessions::is_ours( $order ) ) {
			return '';
		}
		$settings    = Settings::load();
		$environment = (string) $order->get_meta( OrderSessions::ENVIRONMENT );
		$key         = $settings->get( ( 'live' === $environment ? 'live' : 'test' ) . '_secret_key' );
		if ( '' === $key ) {
			return '';
		}
		try {
			$session = ( new ApiClient( $settings->api_url(), $key ) )->get_session( $session_id );
		} catch ( ApiException $error ) {
			Logger::warning( 'could not confirm the session', array( 'orderId' => $order->get_id(), 'code' => $error->error_code ) );
			return '';
		}
		try {
			Settlement::apply( $order, $session );
		} catch ( \RuntimeException $error ) {
			// The database would not keep the order's new status (Settlement gave its claim back): the payer's
			// page, the REST route and the scheduled check carry on as if the service could not be asked, and
			// the webhook, answered 500 for the same reason, or the next scheduled check settles it.
			Logger::error( 'could not store the session outcome', array( 'orderId' => $order->get_id(), 'error' => $error->getMessage() ) );
			return '';
		}
		return (string) ( $session['status'] ?? '' );
	}
}
