<?php
/**
 * Order totals in the currency's minor unit.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce;

defined( 'ABSPATH' ) || defined( 'SERVICEPAY_TESTING' ) || exit;

/**
 * The service takes integers in the minor unit (kobo, cents). The number of decimals is the currency's ISO
 * 4217 exponent, not the shop's display setting: a shop that shows whole naira still owes kobo to the service.
 * Conversion is done on the decimal string, never through a float.
 */
final class Money {

	/** ISO 4217 exponents that are not 2. */
	private const EXPONENTS = array(
		'BIF' => 0, 'CLP' => 0, 'DJF' => 0, 'GNF' => 0, 'ISK' => 0, 'JPY' => 0, 'KMF' => 0, 'KRW' => 0, 'PYG' => 0, // phpcs:ignore
		'RWF' => 0, 'UGX' => 0, 'UYI' => 0, 'VND' => 0, 'VUV' => 0, 'XAF' => 0, 'XOF' => 0, 'XPF' => 0, // phpcs:ignore
		'BHD' => 3, 'IQD' => 3, 'JOD' => 3, 'KWD' => 3, 'LYD' => 3, 'OMR' => 3, 'TND' => 3, // phpcs:ignore
	);

	/**
	 * The currency's number of minor-unit digits.
	 *
	 * @param string $currency ISO 4217 code.
	 */
	public static function exponent( string $currency ): int {
		return self::EXPONENTS[ strtoupper( $currency ) ] ?? 2;
	}

	/**
	 * `"1234.5"` NGN → 123450. Throws when the amount has more precision than the currency (it cannot be paid
	 * exactly) or is not a non-negative decimal.
	 *
	 * @param string $amount   Decimal string as WooCommerce stores it (`$order->get_total( 'edit' )`).
	 * @param string $currency ISO 4217 code.
	 * @throws \InvalidArgumentException When it cannot be expressed in minor units.
	 */
	public static function to_minor( string $amount, string $currency ): int {
		$amount = trim( $amount );
		if ( 1 !== preg_match( '/^(\d+)(?:\.(\d*))?$/', $amount, $m ) ) {
			throw new \InvalidArgumentException( 'Not an amount: ' . $amount );
		}
		$exponent = self::exponent( $currency );
		$whole    = $m[1];
		$fraction = rtrim( $m[2] ?? '', '0' );
		if ( strlen( $fraction ) > $exponent ) {
			throw new \InvalidArgumentException( sprintf( '%s %s has more decimals than the currency allows (%d).', $amount, $currency, $exponent ) );
		}
		$digits = ltrim( $whole . str_pad( $fraction, $exponent, '0' ), '0' );
		if ( '' === $digits ) {
			return 0;
		}
		if ( strlen( $digits ) > 18 ) {
			throw new \InvalidArgumentException( 'Amount too large: ' . $amount );
		}
		return (int) $digits;
	}

	/**
	 * 123450 NGN → `"1234.50"`, for notes.
	 *
	 * @param int    $minor    Minor units.
	 * @param string $currency ISO 4217 code.
	 */
	public static function from_minor( int $minor, string $currency ): string {
		$exponent = self::exponent( $currency );
		if ( 0 === $exponent ) {
			return (string) $minor;
		}
		$digits = str_pad( (string) abs( $minor ), $exponent + 1, '0', STR_PAD_LEFT );
		return ( $minor < 0 ? '-' : '' ) . substr( $digits, 0, -$exponent ) . '.' . substr( $digits, -$exponent );
	}
}
