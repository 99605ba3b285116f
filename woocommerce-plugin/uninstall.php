<?php
/**
 * Deleting the plugin: nothing of it runs any more, and the shop owner's settings are kept unless the site
 * asks for all of WooCommerce's data to go (`WC_REMOVE_ALL_DATA`, as WooCommerce itself and its Stripe gateway
 * do), so reinstalling picks up where it left off. Orders keep their notes and ServicePay meta either way (they
 * are the shop's records).
 *
 * @package ServicePay\WooCommerce
 */

defined( 'WP_UNINSTALL_PLUGIN' ) || exit;

require_once __DIR__ . '/src/autoload.php';

// The scheduled checks first: each names an order by its arguments, so they are cancelled by their group (an
// empty arguments array would match only actions scheduled with none, which is none of them). Without
// WooCommerce active the Action Scheduler is not loaded: its table is updated directly.
\ServicePay\WooCommerce\Scheduler\SessionCheck::cancel_all();

if ( defined( 'WC_REMOVE_ALL_DATA' ) && true === WC_REMOVE_ALL_DATA ) {
	delete_option( 'woocommerce_servicepay_settings' );
	delete_option( 'servicepay_webhook_endpoints' );
	delete_option( 'servicepay_schema_version' );
	\ServicePay\WooCommerce\Api\ServiceProfile::forget();
	\ServicePay\WooCommerce\Orders\SettlementClaim::drop();
}
