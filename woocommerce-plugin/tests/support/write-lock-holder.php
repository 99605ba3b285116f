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
require __DIR__ . '/load-wordpress.php';

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
