<?php
/**
 * One-time claims, so a payment settles an order exactly once.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Orders;

defined( 'ABSPATH' ) || exit;

/**
 * A row in `{prefix}servicepay_claims` whose primary key is the thing claimed (`paid:<order id>`,
 * `event:<event id>`, …). `INSERT IGNORE` is atomic in MySQL and in SQLite (`INSERT OR IGNORE`): of any number
 * of concurrent requests, in any PHP processes, exactly one inserts the row and sees one affected row. Order
 * meta cannot do this: `add_meta( …, unique )` reads and then writes, and HPOS and the posts table differ.
 */
final class SettlementClaim {

	public const SCHEMA_VERSION = '1';

	/** The table's name with the site's prefix. */
	public static function table(): string {
		global $wpdb;
		return $wpdb->prefix . 'servicepay_claims';
	}

	/** Creates the table when missing (activation, and lazily after an update). */
	public static function install(): void {
		global $wpdb;
		$table = self::table();
		// phpcs:ignore WordPress.DB.DirectDatabaseQuery,WordPress.DB.PreparedSQL.InterpolatedNotPrepared
		$wpdb->query( "CREATE TABLE IF NOT EXISTS {$table} ( claim_key VARCHAR(191) NOT NULL, order_id BIGINT UNSIGNED NOT NULL DEFAULT 0, created_at DATETIME NOT NULL, PRIMARY KEY (claim_key) )" );
		update_option( 'servicepay_schema_version', self::SCHEMA_VERSION, true );
	}

	/** Installs the table once per schema version. */
	public static function maybe_install(): void {
		if ( self::SCHEMA_VERSION !== get_option( 'servicepay_schema_version' ) ) {
			self::install();
		}
	}

	/**
	 * Takes the claim; true for exactly one caller per key, ever.
	 *
	 * @param string $key      What is claimed.
	 * @param int    $order_id The order it concerns.
	 * @throws \RuntimeException When the database refused the statement (the caller answers 500, the service retries).
	 */
	public static function take( string $key, int $order_id ): bool {
		global $wpdb;
		$table = self::table();
		// phpcs:ignore WordPress.DB.DirectDatabaseQuery,WordPress.DB.PreparedSQL.InterpolatedNotPrepared
		$result = $wpdb->query( $wpdb->prepare( "INSERT IGNORE INTO {$table} ( claim_key, order_id, created_at ) VALUES ( %s, %d, %s )", $key, $order_id, gmdate( 'Y-m-d H:i:s' ) ) );
		if ( false === $result ) {
			throw new \RuntimeException( 'The settlement claim could not be written: ' . $wpdb->last_error );
		}
		return 1 === (int) $result;
	}

	/**
	 * Takes over a claim whose holder never finished: older than `$seconds` (a request that died between
	 * claiming and settling, or could not give the claim back). Only one caller can delete that exact row,
	 * so only one takes over.
	 *
	 * @param string $key      What is claimed.
	 * @param int    $order_id The order it concerns.
	 * @param int    $seconds  Age after which a claim counts as abandoned.
	 */
	public static function take_over_stale( string $key, int $order_id, int $seconds = 120 ): bool {
		global $wpdb;
		$table = self::table();
		// phpcs:ignore WordPress.DB.DirectDatabaseQuery,WordPress.DB.PreparedSQL.InterpolatedNotPrepared
		$created = $wpdb->get_var( $wpdb->prepare( "SELECT created_at FROM {$table} WHERE claim_key = %s", $key ) );
		if ( ! is_string( $created ) || strtotime( $created . ' UTC' ) > time() - $seconds ) {
			return false;
		}
		// phpcs:ignore WordPress.DB.DirectDatabaseQuery,WordPress.DB.PreparedSQL.InterpolatedNotPrepared
		$deleted = $wpdb->query( $wpdb->prepare( "DELETE FROM {$table} WHERE claim_key = %s AND created_at = %s", $key, $created ) );
		return 1 === (int) $deleted && self::take( $key, $order_id );
	}

	/**
	 * Whether the key was claimed.
	 *
	 * @param string $key What is claimed.
	 */
	public static function exists( string $key ): bool {
		global $wpdb;
		$table = self::table();
		// phpcs:ignore WordPress.DB.DirectDatabaseQuery,WordPress.DB.PreparedSQL.InterpolatedNotPrepared
		return null !== $wpdb->get_var( $wpdb->prepare( "SELECT claim_key FROM {$table} WHERE claim_key = %s", $key ) );
	}

	/**
	 * Whether the key was claimed within the last `$seconds`: its holder may still be at work.
	 *
	 * @param string $key     What is claimed.
	 * @param int    $seconds How recent.
	 */
	public static function recent( string $key, int $seconds ): bool {
		global $wpdb;
		$table = self::table();
		// phpcs:ignore WordPress.DB.DirectDatabaseQuery,WordPress.DB.PreparedSQL.InterpolatedNotPrepared
		$created = $wpdb->get_var( $wpdb->prepare( "SELECT created_at FROM {$table} WHERE claim_key = %s", $key ) );
		return is_string( $created ) && strtotime( $created . ' UTC' ) >= time() - $seconds;
	}

	/**
	 * Gives a claim back, when the work it guarded did not happen (so a retry can do it).
	 *
	 * @param string $key What was claimed.
	 */
	public static function release( string $key ): void {
		global $wpdb;
		$wpdb->delete( self::table(), array( 'claim_key' => $key ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery
	}

	/** Drops the table (uninstall). */
	public static function drop(): void {
		global $wpdb;
		$table = self::table();
		$wpdb->query( "DROP TABLE IF EXISTS {$table}" ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery,WordPress.DB.PreparedSQL.InterpolatedNotPrepared
	}
}
