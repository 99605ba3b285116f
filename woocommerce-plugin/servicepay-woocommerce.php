<?php
/**
 * Plugin Name:          ServicePay for WooCommerce
 * Plugin URI:           https://github.com/servicepay/servicepay
 * Description:          Bank-transfer checkout: customers pay a one-time account number, and the order is marked paid the moment the transfer arrives.
 * Version:              0.1.0
 * Requires at least:    6.5
 * Requires PHP:         8.1
 * Requires Plugins:     woocommerce
 * WC requires at least: 9.0
 * WC tested up to:      9.4
 * Author:               ServicePay
 * License:              GPL-2.0-or-later
 * License URI:          https://www.gnu.org/licenses/gpl-2.0.html
 * Text Domain:          servicepay-woocommerce
 * Domain Path:          /languages
 *
 * @package ServicePay\WooCommerce
 */

defined( 'ABSPATH' ) || exit;

define( 'SERVICEPAY_WC_VERSION', '0.1.0' );

require_once __DIR__ . '/src/autoload.php';

\ServicePay\WooCommerce\Plugin::boot( __FILE__ );
