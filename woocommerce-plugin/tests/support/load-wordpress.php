<?php
/**
 * Loads the test shop's WordPress in a PHP process of its own (the workers the concurrency tests start), as a
 * request to the shop's home page would: WP_URL names the shop, SERVICEPAY_WP_DIR its WordPress folder.
 *
 * @package ServicePay\WooCommerce
 */

$servicepay_url            = parse_url( (string) getenv( 'WP_URL' ) );
$_SERVER['HTTP_HOST']      = ( $servicepay_url['host'] ?? '127.0.0.1' ) . ( isset( $servicepay_url['port'] ) ? ':' . $servicepay_url['port'] : '' );
$_SERVER['SERVER_NAME']    = $servicepay_url['host'] ?? '127.0.0.1';
$_SERVER['REQUEST_URI']    = '/';
$_SERVER['REQUEST_METHOD'] = 'GET';
require getenv( 'SERVICEPAY_WP_DIR' ) . '/wp-load.php';
