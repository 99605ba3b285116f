<?php
/**
 * What the service says it takes: its currencies and their amount bounds, remembered per environment.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Api;

use ServicePay\WooCommerce\Logger;
use ServicePay\WooCommerce\Money;
use ServicePay\WooCommerce\Settings;

defined( 'ABSPATH' ) || exit;

/**
 * The business's public checkout profile (`GET /api/widget/profile`) lists every currency the service takes,
 * with the smallest and largest amount in minor units. The gateway is offered only where a session can be made
 * (a store currency in the list, a total within its bounds), so a payer never places an order that bank
 * transfer then refuses. The list is kept in the option `servicepay_service_profile` (`{ test|live: {
 * currencies, checkedAt } }`): read on every settings save, and again on a customer's page when it is older
 * than a day (at most once an hour when the service does not answer, with a short timeout). A list never read
 * offers nothing: without it the shop cannot know bank transfer works.
 */
final class ServiceProfile {

	public const OPTION = 'servicepay_service_profile';

	/** Older than this, the list is read again when a page asks. */
	private const STALE_AFTER = DAY_IN_SECONDS;

	/** After a failed read, no page asks again for this long. */
	private const RETRY_AFTER = HOUR_IN_SECONDS;

	/** A customer's page waits at most this long for the service. */
	private const PAGE_TIMEOUT = 3;

	/**
	 * Remembers the profile the service answered for an environment.
	 *
	 * @param string              $environment `test` or `live`.
	 * @param array<string,mixed> $profile     The profile's `data`.
	 */
	public static function remember( string $environment, array $profile ): void {
		$currencies = array();
		foreach ( is_array( $profile['currencies'] ?? null ) ? $profile['currencies'] : array() as $entry ) {
			if ( is_array( $entry ) && is_string( $entry['currency'] ?? null ) ) {
				$currencies[ strtoupper( $entry['currency'] ) ] = array(
					'minAmount' => (int) ( $entry['minAmount'] ?? 0 ),
					'maxAmount' => (int) ( $entry['maxAmount'] ?? PHP_INT_MAX ),
				);
			}
		}
		$stored                 = self::stored();
		$stored[ $environment ] = array(
			'currencies' => $currencies,
			'checkedAt'  => time(),
		);
		update_option( self::OPTION, $stored, false );
		delete_transient( self::retry_key( $environment ) );
	}

	/**
	 * The currencies the service takes in an environment, with their bounds; null when never read.
	 *
	 * @param string $environment `test` or `live`.
	 * @return array<string,array{minAmount:int,maxAmount:int}>|null
	 */
	public static function currencies( string $environment ): ?array {
		$entry = self::stored()[ $environment ] ?? null;
		return is_array( $entry ) && is_array( $entry['currencies'] ?? null ) ? $entry['currencies'] : null;
	}

	/**
	 * Why bank transfer cannot take this money here ('' when it can): the currency or the amount.
	 *
	 * @param string      $environment `test` or `live`.
	 * @param string      $currency    ISO 4217 code.
	 * @param string|null $total       The total to pay (decimal string), or null when none is known yet.
	 * @return string `''`, `unknown` (the list was never read), `currency` or `amount`.
	 */
	public static function refusal( string $environment, string $currency, ?string $total = null ): string {
		$currencies = self::currencies( $environment );
		if ( null === $currencies ) {
			return 'unknown';
		}
		$bounds = $currencies[ strtoupper( $currency ) ] ?? null;
		if ( null === $bounds ) {
			return 'currency';
		}
		if ( null === $total || (float) $total <= 0 ) {
			return '';
		}
		try {
			$minor = Money::to_minor( $total, $currency );
		} catch ( \InvalidArgumentException $error ) {
			return 'amount';
		}
		return $minor < $bounds['minAmount'] || $minor > $bounds['maxAmount'] ? 'amount' : '';
	}

	/**
	 * Reads the list again when it is missing or older than a day, unless a read failed within the hour.
	 * Called on customers' pages, so it waits a few seconds at most; the last list read stays in use.
	 *
	 * @param Settings $settings The gateway's settings.
	 */
	public static function refresh_if_stale( Settings $settings ): void {
		$environment = $settings->environment();
		$entry       = self::stored()[ $environment ] ?? null;
		$checked     = is_array( $entry ) ? (int) ( $entry['checkedAt'] ?? 0 ) : 0;
		if ( '' === $settings->secret_key() || time() - $checked < self::STALE_AFTER || get_transient( self::retry_key( $environment ) ) ) {
			return;
		}
		self::fetch( $settings, self::PAGE_TIMEOUT );
	}

	/**
	 * Reads the profile with the environment's key and remembers it. Answers the service's error, or null.
	 *
	 * @param Settings $settings The gateway's settings (its API address and the active key).
	 * @param int      $timeout  Seconds to wait.
	 */
	public static function fetch( Settings $settings, int $timeout = 15 ): ?ApiException {
		$environment = $settings->environment();
		try {
			self::remember( $environment, ( new ApiClient( $settings->api_url(), $settings->secret_key(), $timeout ) )->profile() );
			return null;
		} catch ( ApiException $error ) {
			set_transient( self::retry_key( $environment ), 1, self::RETRY_AFTER );
			Logger::warning( 'could not read the service profile', array( 'environment' => $environment, 'code' => $error->error_code ) );
			return $error;
		}
	}

	/** Forgets every remembered profile (uninstall). */
	public static function forget(): void {
		delete_option( self::OPTION );
		delete_transient( self::retry_key( 'test' ) );
		delete_transient( self::retry_key( 'live' ) );
	}

	/**
	 * The option as stored.
	 *
	 * @return array<string,mixed>
	 */
	private static function stored(): array {
		$stored = get_option( self::OPTION, array() );
		return is_array( $stored ) ? $stored : array();
	}

	/**
	 * The transient that holds off reads after a failure.
	 *
	 * @param string $environment `test` or `live`.
	 */
	private static function retry_key( string $environment ): string {
		return 'servicepay_profile_retry_' . $environment;
	}
}
