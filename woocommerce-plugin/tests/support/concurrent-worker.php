<?php
/**
 * One of several PHP processes racing on the same database, as concurrent HTTP requests would.
 * Usage: php concurrent-worker.php <claim|settle> <order id> <barrier dir> [claim key | session JSON]
 * Loads WordPress, says it is ready, waits for the go signal (so that every worker starts its database work
 * at the same moment), then prints one JSON line.
 *
 * @package ServicePay\WooCommerce
 */

[ , $mode, $order_id, $barrier ] = $argv;
require __DIR__ . '/load-wordpress.php';

touch( $barrier . '/ready-' . getmypid() );
$deadline = microtime( true ) + 60;
while ( ! file_exists( $barrier . '/go' ) && microtime( true ) < $deadline ) {
	usleep( 1000 );
}
if ( 'claim' === $mode ) {
	$won = \ServicePay\WooCommerce\Orders\SettlementClaim::take( $argv[4], (int) $order_id );
	echo wp_json_encode( array( 'won' => $won ) ), "\n";
} else {
	$session = json_decode( $argv[4], true );
	$result  = \ServicePay\WooCommerce\Orders\Settlement::apply( wc_get_order( (int) $order_id ), $session, 'evt_race' );
	echo wp_json_encode( array( 'result' => $result ) ), "\n";
}
