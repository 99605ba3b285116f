<?php
/**
 * Test helper: runs one command inside the test's WordPress (a fresh PHP process, as a request would be) and
 * prints JSON. Usage: php wp.php <wordpress dir> <command> [json argument]
 *
 * Commands:
 *   activate                     activates the plugin (as the Plugins screen does); says whether its claims table exists
 *   uninstall {removeAllData?}   deactivates it and runs its uninstall (with WC_REMOVE_ALL_DATA defined when asked);
 *                                prints what is left of its options and table, and its pending scheduled checks
 *   pending-checks               how many servicepay_check_order actions are pending
 *   order-count                  how many orders were placed (any status but the Blocks checkout's drafts)
 *   get-option <name>            an option's value (null when absent)
 *   set-option {name, value}     sets an option (the store's currency, the gateway's settings), as wp option update would
 *   endpoints                    the webhook endpoints the shop stored (ids and sealed secrets)
 *   webhook-secret               the test environment's signing secret, to sign a replayed delivery
 *   forget-endpoints             deletes the stored endpoints, as a restored database or a reinstall would
 *   product {price, stock}       a simple product with managed stock
 *   stock <product id>           its stock quantity
 *   order <order id>             the order as a test reads it: status, totals, session meta, notes, and its status as
 *                                each order table stores it
 *   order-by-session <ses_…>     the order that had the session
 *   set-total {id, total}        changes the order's total (as a shop owner editing the order would)
 *   run-check <order id>         runs the order's due ServicePay check now (what WP-Cron would do)
 *   cancel-unpaid <order id>     what the plugin answers WooCommerce's unpaid-order timer for the order
 *   refund {id, amount, reason?} what the order screen's "Refund via ServicePay" does (its admin-ajax action calls
 *                                wc_create_refund with refund_payment): WooCommerce's refund, paid back through the
 *                                gateway; prints the refund, or WooCommerce's error (the message the screen shows)
 */

$wp_dir  = $argv[1] ?? '';
$command = $argv[2] ?? '';
$arg     = json_decode( $argv[3] ?? 'null', true );
$url     = parse_url( (string) ( getenv( 'WP_URL' ) ?: 'http://127.0.0.1' ) );

$_SERVER['HTTP_HOST']      = $url['host'] . ( isset( $url['port'] ) ? ':' . $url['port'] : '' );
$_SERVER['SERVER_NAME']    = $url['host'];
$_SERVER['REQUEST_URI']    = '/';
$_SERVER['REQUEST_METHOD'] = 'GET';
require $wp_dir . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';

$out = static function ( $value ): void {
	echo wp_json_encode( $value ), "\n";
	exit( 0 );
};
$plugin = 'servicepay-woocommerce/servicepay-woocommerce.php';

/** The table's name when it exists, else null (on MariaDB and on SQLite alike). */
$table_named = static function ( string $name ) {
	global $wpdb;
	$shown  = $wpdb->suppress_errors( true );
	$exists = false !== $wpdb->query( "SELECT 1 FROM {$name} LIMIT 1" ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared
	$wpdb->suppress_errors( $shown );
	return $exists ? $name : null;
};

/** How many ServicePay checks wait to run. */
$pending_checks = static function (): int {
	return count( as_get_scheduled_actions( array( 'hook' => 'servicepay_check_order', 'status' => ActionScheduler_Store::STATUS_PENDING, 'per_page' => -1 ), 'ids' ) );
};

/** An order's status in each table that may hold it; null where the table or the row is missing. */
$stored_status = static function ( int $id ): array {
	global $wpdb;
	$shown = $wpdb->suppress_errors( true );
	$tables = array(
		'wc_orders' => $wpdb->get_var( $wpdb->prepare( "SELECT status FROM {$wpdb->prefix}wc_orders WHERE id = %d", $id ) ),
		'posts'     => $wpdb->get_var( $wpdb->prepare( "SELECT post_status FROM {$wpdb->posts} WHERE ID = %d", $id ) ),
	);
	$wpdb->suppress_errors( $shown );
	return $tables;
};

switch ( $command ) {
	case 'activate':
		wp_set_current_user( 1 );
		$result = activate_plugin( $plugin );
		if ( is_wp_error( $result ) ) {
			fwrite( STDERR, $result->get_error_message() . "\n" );
			exit( 1 );
		}
		global $wpdb;
		$out( array( 'active' => is_plugin_active( $plugin ), 'table' => $table_named( $wpdb->prefix . 'servicepay_claims' ) ) );
		// no break: $out exits.
	case 'uninstall':
		if ( ! empty( $arg['removeAllData'] ) ) {
			define( 'WC_REMOVE_ALL_DATA', true );
		}
		wp_set_current_user( 1 );
		deactivate_plugins( $plugin );
		uninstall_plugin( $plugin );
		global $wpdb;
		$out(
			array(
				'settings'      => null !== get_option( 'woocommerce_servicepay_settings', null ),
				'endpoints'     => null !== get_option( 'servicepay_webhook_endpoints', null ),
				'table'         => $table_named( $wpdb->prefix . 'servicepay_claims' ),
				'pendingChecks' => $pending_checks(),
			)
		);
	case 'pending-checks':
		$out( array( 'pending' => $pending_checks() ) );
	case 'order-count':
		$statuses = array_diff( array_keys( wc_get_order_statuses() ), array( 'wc-checkout-draft' ) );
		$out( array( 'count' => count( wc_get_orders( array( 'limit' => -1, 'return' => 'ids', 'status' => $statuses ) ) ) ) );
	case 'get-option':
		$out( get_option( (string) $arg, null ) );
	case 'set-option':
		update_option( (string) $arg['name'], $arg['value'] );
		$out( get_option( (string) $arg['name'], null ) );
	case 'endpoints':
		$out( get_option( 'servicepay_webhook_endpoints', null ) );
	case 'forget-endpoints':
		delete_option( \ServicePay\WooCommerce\Webhooks\EndpointStore::OPTION );
		$out( array( 'endpoints' => get_option( \ServicePay\WooCommerce\Webhooks\EndpointStore::OPTION, null ) ) );
	case 'webhook-secret':
		// The test replays a delivery itself, signed as the service signs it, with the secret the shop holds.
		$out( array( 'secret' => \ServicePay\WooCommerce\Webhooks\EndpointStore::secrets()['test'] ?? null ) );
	case 'product':
		// A simple product with managed stock, priced as asked.
		$product = new WC_Product_Simple();
		$product->set_name( $arg['name'] ?? 'Servicepay test product' );
		$product->set_regular_price( (string) ( $arg['price'] ?? '25.00' ) );
		$product->set_manage_stock( true );
		$product->set_stock_quantity( (int) ( $arg['stock'] ?? 10 ) );
		$product->set_status( 'publish' );
		$out( array( 'id' => $product->save() ) );
	case 'stock':
		$out( array( 'stock' => wc_get_product( (int) $arg )->get_stock_quantity() ) );
	case 'order':
		$order = wc_get_order( (int) $arg );
		$notes = wc_get_order_notes( array( 'order_id' => (int) $arg, 'order' => 'ASC' ) );
		$out(
			array(
				'id'            => $order->get_id(),
				'status'        => $order->get_status(),
				'total'         => $order->get_total( 'edit' ),
				'currency'      => $order->get_currency(),
				'transactionId' => $order->get_transaction_id(),
				'paymentMethod' => $order->get_payment_method(),
				'orderKey'      => $order->get_order_key(),
				'sessionId'     => $order->get_meta( '_servicepay_session_id' ),
				'reference'     => $order->get_meta( '_servicepay_reference' ),
				'sessions'      => $order->get_meta( '_servicepay_sessions' ),
				'stockReduced'  => (bool) $order->get_data_store()->get_stock_reduced( $order->get_id() ),
				'refunded'      => $order->get_total_refunded(),
				'notes'         => array_map( static fn ( $n ) => $n->content, $notes ),
				// The status as each order table stores it (HPOS's wc_orders and the posts table it syncs to),
				// for a test that times out waiting for a status: a write one table lost shows here.
				'stored'        => $stored_status( (int) $arg ),
			)
		);
	case 'refund':
		$refund = wc_create_refund(
			array(
				'order_id'       => (int) $arg['id'],
				'amount'         => (string) $arg['amount'],
				'reason'         => (string) ( $arg['reason'] ?? '' ),
				'refund_payment' => true,
			)
		);
		if ( is_wp_error( $refund ) ) {
			$out( array( 'error' => $refund->get_error_message() ) );
		}
		$out(
			array(
				'id'                 => $refund->get_id(),
				'amount'             => $refund->get_amount(),
				'refundedPayment'    => $refund->get_refunded_payment(),
				'servicepayRefundId' => $refund->get_meta( '_servicepay_refund_id' ),
			)
		);
	case 'order-by-session':
		$orders = wc_get_orders( array( 'limit' => 1, 'meta_key' => '_servicepay_sessions', 'meta_value' => $arg, 'meta_compare' => 'LIKE' ) ); // phpcs:ignore WordPress.DB.SlowDBQuery
		$out( array( 'id' => $orders ? $orders[0]->get_id() : 0 ) );
	case 'set-total':
		$order = wc_get_order( (int) $arg['id'] );
		$order->set_total( (string) $arg['total'] );
		$order->save();
		$out( array( 'total' => $order->get_total( 'edit' ) ) );
	case 'run-check':
		// What WP-Cron would do once the action is due: run the order's pending ServicePay check now.
		$ids = as_get_scheduled_actions(
			array(
				'hook'   => 'servicepay_check_order',
				'args'   => array( 'order_id' => (int) $arg ),
				'group'  => 'servicepay',
				'status' => ActionScheduler_Store::STATUS_PENDING,
			),
			'ids'
		);
		foreach ( $ids as $id ) {
			ActionScheduler::runner()->process_action( $id, 'servicepay-test' );
		}
		$out( array( 'ran' => count( $ids ) ) );
	case 'cancel-unpaid':
		// WooCommerce's unpaid-order timer, asked about one order as wc_cancel_unpaid_orders() asks about an order it
		// would cancel: with true. (It passes 'checkout' === created_via, so true for classic-checkout orders; these
		// are placed through the Store API, for which WooCommerce 9.4 would pass false and never ask the plugin.)
		$order = wc_get_order( (int) $arg );
		$out( array( 'cancel' => (bool) apply_filters( 'woocommerce_cancel_unpaid_order', true, $order ) ) );
	default:
		fwrite( STDERR, "unknown command $command\n" );
		exit( 2 );
}
