<?php
/**
 * What a ServicePay key says about itself.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Security;

defined( 'ABSPATH' ) || defined( 'SERVICEPAY_TESTING' ) || exit;

/**
 * Keys are `sk_test_`, `sk_live_`, `pk_test_`, `pk_live_` + 32 base62 characters (docs/protocol.md).
 */
final class ApiKey {

	/**
	 * `secret`, `publishable`, `client_secret` or `unknown`.
	 *
	 * @param string $key Key.
	 */
	public static function kind( string $key ): string {
		if ( 1 === preg_match( '/^sk_(test|live)_/', $key ) ) {
			return 'secret';
		}
		if ( 1 === preg_match( '/^pk_(test|live)_/', $key ) ) {
			return 'publishable';
		}
		if ( 1 === preg_match( '/^cs_(test|live)_/', $key ) ) {
			return 'client_secret';
		}
		return 'unknown';
	}

	/**
	 * `test`, `live`, or null when the key does not say.
	 *
	 * @param string $key Key.
	 */
	public static function environment( string $key ): ?string {
		return 1 === preg_match( '/^(?:sk|pk|cs)_(test|live)_/', $key, $m ) ? $m[1] : null;
	}

	/**
	 * Whether the key has a secret key's shape.
	 *
	 * @param string $key Key.
	 */
	public static function is_well_formed_secret( string $key ): bool {
		return 1 === preg_match( '/^sk_(test|live)_[A-Za-z0-9]{32}$/', $key );
	}

	/**
	 * Prefix and last four, the only part of a key ever shown again: `sk_test_…a1B2`.
	 *
	 * @param string $key Key.
	 */
	public static function mask( string $key ): string {
		if ( '' === $key ) {
			return '';
		}
		$prefix = 1 === preg_match( '/^[a-z]{2}_(?:test|live)_/', $key, $m ) ? $m[0] : '';
		$tail   = strlen( $key ) > strlen( $prefix ) + 8 ? substr( $key, -4 ) : '';
		return $prefix . '…' . $tail;
	}
}
