<?php
/**
 * Removes what the plugin stored: its settings, the webhook endpoints it remembers, its claims table and its
 * scheduled checks. Orders keep their notes and their ServicePay meta (they are the shop's records).
 *
 * @package ServicePay\WooCommerce
 */

defined( 'WP_UNINSTALL_PLUGIN' ) || exit;

require_once __DIR__ . '/src/autoload.php';

delete_option( 'woocommerce_servicepay_settings' );
delete_option( 'servicepay_webhook_endpoints' );
delete_option( 'servicepay_schema_version' );
\ServicePay\WooCommerce\Orders\SettlementClaim::drop();
if ( function_exists( 'as_unschedule_all_actions' ) ) {
	as_unschedule_all_actions( 'servicepay_check_order', array(), 'servicepay' );
}
