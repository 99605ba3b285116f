<?php
/**
 * Plugin Name: ServicePay test shop: wait for SQLite's write lock, as MySQL waits for a row lock
 *
 * Test stack only: test/woocommerce/support/woo-stack.ts copies this into wp-content/mu-plugins.
 *
 * The SQLite integration runs each statement in its own transaction and gives up on a lock after 5 s (its PDO
 * timeout), so the wait is raised to 30 s below (MySQL waits 50 s by default). That wait does not cover every
 * case: before an upsert (INSERT … ON DUPLICATE KEY UPDATE, which is how WooCommerce saves an order row under
 * HPOS, and how WordPress adds options) the integration reads the table's keys, and a transaction that has read
 * cannot wait for the write lock: SQLite answers "database is locked" at once, whatever the timeout, to avoid a
 * deadlock. The integration then drops the statement and only logs it, and WooCommerce reads the failed upsert as
 * "0 rows" and goes on. So while another request writes, an order saved as paid kept its old status although its
 * "Pending payment to Processing" note was written (the CI failures of the Blocks cancel-then-pay test).
 *
 * Here a write statement that fails on the lock outside an explicit transaction is run again until the lock is
 * free, for up to 30 s: each attempt is its own transaction, rolled back when it fails, so nothing is applied
 * twice. Inside an explicit transaction (START TRANSACTION … COMMIT) it is not retried: that transaction holds
 * its read lock, so waiting could not end.
 *
 * @package ServicePay\WooCommerce
 */

$servicepay_translator = $GLOBALS['wpdb']->dbh ?? null;
if ( ! is_object( $servicepay_translator ) || ! method_exists( $servicepay_translator, 'get_pdo' ) ) {
	return;
}
$servicepay_translator->get_pdo()->exec( 'PRAGMA busy_timeout = 30000' );
if ( ! property_exists( $servicepay_translator, 'transaction_level' ) ) {
	return;
}

add_filter(
	'pre_query_sqlite_db',
	static function ( $result, $translator, $statement, $mode, $fetch_mode_args ) {
		static $running = false;
		if ( null !== $result || $running || ! preg_match( '/^\s*(INSERT|REPLACE|UPDATE|DELETE)\b/i', (string) $statement ) ) {
			return $result;
		}
		if ( ( new ReflectionProperty( $translator, 'transaction_level' ) )->getValue( $translator ) > 0 ) {
			return $result;
		}
		$running  = true;
		$deadline = microtime( true ) + 30;
		$pause    = 5000;
		try {
			for ( ;; ) {
				$answer = $translator->query( $statement, $mode, ...$fetch_mode_args );
				$locked = false === $answer && str_contains( (string) $translator->get_error_message(), 'General error: 5 database is locked' );
				if ( ! $locked || microtime( true ) > $deadline ) {
					return $answer;
				}
				// A COMMIT that failed on the lock leaves its transaction open (the integration counts it as ended).
				try {
					$translator->get_pdo()->exec( 'ROLLBACK' );
				} catch ( PDOException $none ) {
					unset( $none ); // No transaction was open: the usual case.
				}
				usleep( $pause );
				$pause = min( 100000, $pause * 2 );
			}
		} finally {
			$running = false;
		}
	},
	10,
	5
);
