<?php
/**
 * PHPUnit bootstrap: the plugin's autoloader, and WordPress itself when SERVICEPAY_WP_DIR names one (for the
 * `wordpress` group, which needs WooCommerce and a database).
 *
 * @package ServicePay\WooCommerce
 */

$wp_dir = getenv( 'SERVICEPAY_WP_DIR' );
if ( is_string( $wp_dir ) && '' !== $wp_dir ) {
	$url                       = parse_url( (string) getenv( 'WP_URL' ) );
	$_SERVER['HTTP_HOST']      = ( $url['host'] ?? '127.0.0.1' ) . ( isset( $url['port'] ) ? ':' . $url['port'] : '' );
	$_SERVER['SERVER_NAME']    = $url['host'] ?? '127.0.0.1';
	$_SERVER['REQUEST_URI']    = '/';
	$_SERVER['REQUEST_METHOD'] = 'GET';
	require $wp_dir . '/wp-load.php';
	if ( ! class_exists( \ServicePay\WooCommerce\Plugin::class ) ) {
		fwrite( STDERR, "The plugin is not active in $wp_dir\n" );
		exit( 1 );
	}
} else {
	define( 'SERVICEPAY_TESTING', true );
	require dirname( __DIR__ ) . '/src/autoload.php';
}
require __DIR__ . '/WordPressTestCase.php';
require __DIR__ . '/support/SignedWebhooks.php';
require __DIR__ . '/support/SlowSettler.php';
require __DIR__ . '/support/StubService.php';
