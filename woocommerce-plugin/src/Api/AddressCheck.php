<?php
/**
 * Whether a ServicePay API answers at an address.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Api;

defined( 'ABSPATH' ) || exit;

/**
 * The settings page checks the API address before keeping it, as it checks a key: `GET /api/widget/profile`
 * without a key must answer as ServicePay does, 401 in its envelope with `meta.code` `authentication_required`.
 * That needs no key (so a shop without one yet is checked too) and tells a ServicePay API from anything else
 * that answers at the address (another server's 404 page, a proxy's error).
 */
final class AddressCheck {

	/**
	 * Whether ServicePay answers at the address (`serves`), and what is wrong, in a shop owner's words
	 * (`problem`, '' when nothing is). ServicePay may answer and still have a problem (busy, its database down):
	 * the address is right then, and the owner is told.
	 *
	 * @param string $url The API address as typed.
	 * @return array{serves:bool,problem:string}
	 */
	public static function check( string $url ): array {
		$parts = wp_parse_url( $url );
		if ( ! is_array( $parts ) || ! in_array( $parts['scheme'] ?? '', array( 'http', 'https' ), true ) || '' === ( $parts['host'] ?? '' ) ) {
			return self::refused( __( 'it is not a web address (http://… or https://…)', 'servicepay-woocommerce' ) );
		}
		$response = wp_remote_get(
			untrailingslashit( $url ) . '/api/widget/profile',
			array(
				'timeout'     => 10,
				'redirection' => 0,
				'headers'     => array( 'Accept' => 'application/json' ),
			)
		);
		if ( is_wp_error( $response ) ) {
			return self::refused( ConnectionProblem::describe( $response->get_error_message() ) );
		}
		$status = (int) wp_remote_retrieve_response_code( $response );
		$json   = json_decode( (string) wp_remote_retrieve_body( $response ), true );
		$code   = is_array( $json ) && is_array( $json['meta'] ?? null ) ? ( $json['meta']['code'] ?? null ) : null;
		if ( ! is_string( $code ) ) {
			/* translators: %d: HTTP status */
			return self::refused( sprintf( __( 'something answered there, but not the ServicePay API (HTTP %d)', 'servicepay-woocommerce' ), $status ) );
		}
		if ( 401 === $status && 'authentication_required' === $code ) {
			return array(
				'serves'  => true,
				'problem' => '',
			);
		}
		return array(
			'serves'  => true,
			/* translators: 1: HTTP status, 2: error code from the service */
			'problem' => sprintf( __( 'it cannot serve right now (HTTP %1$d, %2$s)', 'servicepay-woocommerce' ), $status, $code ),
		);
	}

	/**
	 * The answer for an address where ServicePay does not answer.
	 *
	 * @param string $problem What is wrong.
	 * @return array{serves:bool,problem:string}
	 */
	private static function refused( string $problem ): array {
		return array(
			'serves'  => false,
			'problem' => $problem,
		);
	}
}
