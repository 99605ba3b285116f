<?php
/**
 * What went wrong when the service could not be reached, in a shop owner's words.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Api;

defined( 'ABSPATH' ) || defined( 'SERVICEPAY_TESTING' ) || exit;

/**
 * WordPress's HTTP API reports a failed connection as "cURL error 7: Failed to connect to …": true, and of no
 * use to a shop owner. This names the cause (the cURL error number is stable) in plain words.
 */
final class ConnectionProblem {

	/**
	 * Plain words for a connection error message ("cURL error 7: …" and the like).
	 *
	 * @param string $message The HTTP API's message.
	 */
	public static function describe( string $message ): string {
		if ( str_contains( $message, 'blocked requests through HTTP' ) ) {
			return __( 'WordPress blocks requests to that address (WP_HTTP_BLOCK_EXTERNAL)', 'servicepay-woocommerce' );
		}
		$code = 1 === preg_match( '/cURL error (\d+)/', $message, $match ) ? (int) $match[1] : 0;
		switch ( $code ) {
			case 6:
				return __( 'the host name could not be found', 'servicepay-woocommerce' );
			case 7:
				return __( 'nothing accepted the connection', 'servicepay-woocommerce' );
			case 28:
				return __( 'it did not answer in time', 'servicepay-woocommerce' );
			case 35:
			case 51:
			case 58:
			case 60:
			case 77:
			case 83:
				return __( 'the secure (HTTPS) connection could not be made', 'servicepay-woocommerce' );
			default:
				return __( 'the connection failed', 'servicepay-woocommerce' );
		}
	}
}
