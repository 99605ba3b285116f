<?php
/**
 * Checks `X-Service-Signature` on a webhook's raw body.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Webhooks;

defined( 'ABSPATH' ) || defined( 'SERVICEPAY_TESTING' ) || exit;

/**
 * The header is `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, with one `v1=` per
 * signing secret the service holds (two for a day after a roll). The body is never parsed here: a caller
 * reads it only after `verify()` returned.
 */
final class SignatureVerifier {

	/** Seconds the signed timestamp may differ from now, either way (the SDK's default too). */
	public const TOLERANCE_SECONDS = 300;

	/**
	 * Returns the signed timestamp when the header proves the body came from the service.
	 *
	 * @param string   $raw_body The request body exactly as received.
	 * @param string   $header   The `X-Service-Signature` header ('' when absent).
	 * @param string[] $secrets  The endpoint's signing secrets (`whsec_…`); any one may match.
	 * @param int      $now      Unix seconds.
	 * @return int The signed timestamp.
	 * @throws SignatureException With a stable code: signature_missing, signature_mismatch, timestamp_out_of_tolerance, secret_missing.
	 */
	public static function verify( string $raw_body, string $header, array $secrets, int $now ): int {
		$secrets = array_values( array_filter( $secrets, static fn ( $s ) => is_string( $s ) && '' !== $s ) );
		if ( array() === $secrets ) {
			throw new SignatureException( 'secret_missing', 'No webhook signing secret is stored: save the ServicePay settings again.' );
		}
		[ $timestamp, $signatures ] = self::parse( $header );
		$matched                    = false;
		foreach ( $secrets as $secret ) {
			$expected = hash_hmac( 'sha256', $timestamp . '.' . $raw_body, $secret );
			foreach ( $signatures as $signature ) {
				// Every pair is compared, in constant time, so timing says nothing about which one matched.
				if ( hash_equals( $expected, $signature ) ) {
					$matched = true;
				}
			}
		}
		if ( ! $matched ) {
			throw new SignatureException( 'signature_mismatch', 'The signature does not match the body.' );
		}
		if ( abs( $now - $timestamp ) > self::TOLERANCE_SECONDS ) {
			throw new SignatureException( 'timestamp_out_of_tolerance', 'The signature is older (or newer) than 300 seconds.' );
		}
		return $timestamp;
	}

	/**
	 * Signs a body the way the service does (for tests and for the admin's "send a test" tools).
	 *
	 * @param string $raw_body  Body.
	 * @param string $secret    Signing secret.
	 * @param int    $timestamp Unix seconds.
	 */
	public static function sign( string $raw_body, string $secret, int $timestamp ): string {
		return 't=' . $timestamp . ',v1=' . hash_hmac( 'sha256', $timestamp . '.' . $raw_body, $secret );
	}

	/**
	 * Splits the header into its timestamp and its `v1` values; unknown schemes are ignored.
	 *
	 * @param string $header Header value.
	 * @return array{0:int,1:string[]}
	 * @throws SignatureException When there is no timestamp or no well-formed v1.
	 */
	private static function parse( string $header ): array {
		$timestamp  = null;
		$signatures = array();
		foreach ( explode( ',', $header ) as $part ) {
			$pair = explode( '=', trim( $part ), 2 );
			if ( 2 !== count( $pair ) ) {
				continue;
			}
			[ $key, $value ] = $pair;
			if ( 't' === $key && 1 === preg_match( '/^\d{1,12}$/', $value ) ) {
				$timestamp = (int) $value;
			} elseif ( 'v1' === $key && 1 === preg_match( '/^[0-9a-f]{64}$/', strtolower( $value ) ) ) {
				$signatures[] = strtolower( $value );
			}
		}
		if ( null === $timestamp || array() === $signatures ) {
			throw new SignatureException( 'signature_missing', 'The X-Service-Signature header is missing or malformed.' );
		}
		return array( $timestamp, $signatures );
	}
}
