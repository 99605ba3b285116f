<?php
/**
 * Another request settling an order slowly: the webhook that took the claim while the payer's return arrives.
 * Usage: php slow-settler.php <signal dir> <order id> <session JSON> <milliseconds> [fail|fail-paid|fail-hold]
 * Loads WordPress, touches <dir>/ready, waits for <dir>/go, then runs Settlement::apply() for real. The first time
 * WooCommerce is about to save the order (after the claims are taken, before the new status is written), it
 * touches <dir>/claimed and sleeps <milliseconds>. With `fail` it does so as payment_complete() starts, then
 * throws, which payment_complete() reads as a failure (false): the order stays pending and the settlement gives
 * its claims back, as when the database keeps refusing the paid status. With `fail-paid` it sleeps as it first
 * saves the order paid, then drops every write of the processing status, as the database refusing it would:
 * WooCommerce still runs the status change (its note, mails, stock change), and the settlement gives its claims
 * back and throws. `fail-hold` (a session of another amount) does the same to the on-hold status: the settlement
 * gives its hold claim back and throws. `fail-paid-saved` drops every write of the processing status from the start
 * and sleeps (touching <dir>/claimed) only once WooCommerce's save of the paid order is over
 * (`woocommerce_payment_complete`): the status is lost, what else that save wrote is stored (under HPOS the date
 * paid, in another table than the status), the claims are held; then it gives them back and throws as
 * `fail-paid` does. `fail-note` (a session of another amount for an order on hold already) sleeps as the hold note
 * is about to be written, then the database refuses it: the settlement gives its hold claim back and throws.
 * Touches <dir>/done when apply() returned, and prints one JSON line: what apply() answered.
 *
 * @package ServicePay\WooCommerce
 */

[ , $dir, $order_id, $session_json, $milliseconds ] = $argv;
$fail = 'fail' === ( $argv[5] ?? '' );
// The status whose writes the database is made to lose (quoted as in WooCommerce's statements), '' for none.
$lost = array(
	'fail-paid'       => "'wc-processing'",
	'fail-hold'       => "'wc-on-hold'",
	'fail-paid-saved' => "'wc-processing'",
)[ $argv[5] ?? '' ] ?? '';
// Whether it sleeps after WooCommerce's save of the paid order rather than before it (and loses the status from the start).
$after_save = 'fail-paid-saved' === ( $argv[5] ?? '' );
require __DIR__ . '/load-wordpress.php';

touch( $dir . '/ready' );
$deadline = microtime( true ) + 60;
while ( ! file_exists( $dir . '/go' ) && microtime( true ) < $deadline ) {
	usleep( 1000 );
}
$slowed = false;
$lose   = static function () use ( $lost ): void {
	global $wpdb;
	$wpdb->suppress_errors( true );
	$order_row = '/^\s*(INSERT\s+INTO|UPDATE)\s+`?' . preg_quote( $wpdb->prefix, '/' ) . '(wc_orders|posts)\b/i';
	add_filter(
		'query',
		static fn ( $query ) => is_string( $query ) && str_contains( $query, $lost ) && preg_match( $order_row, $query )
			? 'SELECT 1 FROM servicepay_test_dropped_statement'
			: $query
	);
};
if ( $after_save ) {
	$lose();
}
if ( 'fail-note' === ( $argv[5] ?? '' ) ) {
	add_filter(
		'woocommerce_new_order_note_data',
		static function ( array $note ) use ( $dir, $milliseconds ): array {
			touch( $dir . '/claimed' );
			usleep( 1000 * (int) $milliseconds );
			global $wpdb;
			$wpdb->suppress_errors( true );
			$comments = '/^\s*INSERT\s+INTO\s+`?' . preg_quote( $wpdb->comments, '/' ) . '\b/i';
			add_filter( 'query', static fn ( $query ) => is_string( $query ) && preg_match( $comments, $query ) ? 'SELECT 1 FROM servicepay_test_dropped_statement' : $query );
			return $note;
		}
	);
}
add_action(
	$fail ? 'woocommerce_pre_payment_complete' : ( $after_save ? 'woocommerce_payment_complete' : 'woocommerce_before_order_object_save' ),
	static function () use ( &$slowed, $dir, $milliseconds, $fail, $lost, $after_save, $lose ): void {
		if ( $slowed ) {
			return;
		}
		$slowed = true;
		touch( $dir . '/claimed' );
		usleep( 1000 * (int) $milliseconds );
		if ( $fail ) {
			throw new \Exception( 'simulated: the order could not be saved' );
		}
		if ( '' !== $lost && ! $after_save ) {
			$lose();
		}
	}
);
try {
	$result = \ServicePay\WooCommerce\Orders\Settlement::apply( wc_get_order( (int) $order_id ), json_decode( $session_json, true ), 'evt_slow' );
} catch ( \Throwable $error ) {
	$result = 'threw: ' . $error->getMessage();
}
touch( $dir . '/done' );
echo wp_json_encode( array( 'result' => $result ) ), "\n";
