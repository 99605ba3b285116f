<?php
/**
 * Another request that writes: holds the database's write lock for a moment, when the test asks.
 * Usage: php write-lock-holder.php <signal dir> <milliseconds>
 * Loads WordPress, touches <dir>/ready, waits for <dir>/take, opens a transaction and writes (taking the write
 * lock), touches <dir>/held, keeps the lock for <milliseconds>, commits, and prints one JSON line.
 *
 * @package ServicePay\WooCommerce
 */

[ , $dir, $milliseconds ] = $argv;
$url                       = parse_url( (string) getenv( 'WP_URL' ) );
$_SERVER['HTTP_HOST']      = ( $url['host'] ?? '127.0.0.1' ) . ( isset( $url['port'] ) ? ':' . $url['port'] : '' );
$_SERVER['SERVER_NAME']    = $url['host'] ?? '127.0.0.1';
$_SERVER['REQUEST_URI']    = '/';
$_SERVER['REQUEST_METHOD'] = 'GET';
require getenv( 'SERVICEPAY_WP_DIR' ) . '/wp-load.php';

touch( $dir . '/ready' );
$deadline = microtime( true ) + 60;
while ( ! file_exists( $dir . '/take' ) && microtime( true ) < $deadline ) {
	usleep( 1000 );
}
global $wpdb;
$wpdb->query( 'START TRANSACTION' );
$wrote = $wpdb->query( $wpdb->prepare( "UPDATE {$wpdb->options} SET option_value = %s WHERE option_name = 'servicepay_test_lock_holder'", (string) microtime( true ) ) );
if ( 0 === $wrote ) {
	$wrote = $wpdb->insert( $wpdb->options, array( 'option_name' => 'servicepay_test_lock_holder', 'option_value' => '1', 'autoload' => 'no' ) );
}
touch( $dir . '/held' );
usleep( 1000 * (int) $milliseconds );
$wpdb->query( 'COMMIT' );
echo wp_json_encode( array( 'wrote' => false !== $wrote ) ), "\n";
