<?php
/**
 * WooCommerce's logger with the source `servicepay`.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce;

defined( 'ABSPATH' ) || exit;

/**
 * Thin proxy around `wc_get_logger()`, so every line lands under WooCommerce → Status → Logs → servicepay.
 * Callers pass ids and codes only: never a key, a client secret or a signing secret.
 */
final class Logger {

	public const SOURCE = 'servicepay';

	/**
	 * Logs at a level.
	 *
	 * @param string              $level   WC_Log_Levels value.
	 * @param string              $message Message.
	 * @param array<string,mixed> $context Ids and codes.
	 */
	public static function log( string $level, string $message, array $context = array() ): void {
		if ( ! function_exists( 'wc_get_logger' ) ) {
			return;
		}
		wc_get_logger()->log( $level, $message, array_merge( $context, array( 'source' => self::SOURCE ) ) );
	}

	/**
	 * Info line.
	 *
	 * @param string              $message Message.
	 * @param array<string,mixed> $context Ids and codes.
	 */
	public static function info( string $message, array $context = array() ): void {
		self::log( 'info', $message, $context );
	}

	/**
	 * Warning line.
	 *
	 * @param string              $message Message.
	 * @param array<string,mixed> $context Ids and codes.
	 */
	public static function warning( string $message, array $context = array() ): void {
		self::log( 'warning', $message, $context );
	}

	/**
	 * Error line.
	 *
	 * @param string              $message Message.
	 * @param array<string,mixed> $context Ids and codes.
	 */
	public static function error( string $message, array $context = array() ): void {
		self::log( 'error', $message, $context );
	}
}
