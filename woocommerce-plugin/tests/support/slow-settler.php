<?php
/**
 * Another request settling an order slowly: the webhook that took the claim while the payer's return arrives.
 * Usage: php slow-settler.php <signal dir> <order id> <session JSON> <milliseconds>
 * Loads WordPress, touches <dir>/ready, waits for <dir>/go, then runs Settlement::apply() for real. The first time
 * WooCommerce is about to save the order (after the claims are taken, before the new status is written), it
 * touches <dir>/claimed and sleeps <milliseconds>. Touches <dir>/done when apply() returned, and prints one JSON
 * line: what apply() answered.
 *
 * @package ServicePay\WooCommerce
 */

[ , $dir, $order_id, $session_json, $milliseconds ] = $argv;
require __DIR__ . '/load-wordpress.php';

touch( $dir . '/ready' );
$deadline = microtime( true ) + 60;
while ( ! file_exists( $dir . '/go' ) && microtime( true ) < $deadline ) {
	usleep( 1000 );
}
$slowed = false;
add_action(
	'woocommerce_before_order_object_save',
	static function () use ( &$slowed, $dir, $milliseconds ): void {
		if ( $slowed ) {
			return;
		}
		$slowed = true;
		touch( $dir . '/claimed' );
		usleep( 1000 * (int) $milliseconds );
	}
);
try {
	$result = \ServicePay\WooCommerce\Orders\Settlement::apply( wc_get_order( (int) $order_id ), json_decode( $session_json, true ), 'evt_slow' );
} catch ( \Throwable $error ) {
	$result = 'threw: ' . $error->getMessage();
}
touch( $dir . '/done' );
echo wp_json_encode( array( 'result' => $result ) ), "\n";
