<?php
/**
 * Wires the plugin into WordPress and WooCommerce.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce;

use ServicePay\WooCommerce\Checkout\CheckoutController;
use ServicePay\WooCommerce\Checkout\SessionConfirmer;
use ServicePay\WooCommerce\Orders\OrderSessions;
use ServicePay\WooCommerce\Orders\Refunds;
use ServicePay\WooCommerce\Orders\SettlementClaim;
use ServicePay\WooCommerce\Scheduler\SessionCheck;
use ServicePay\WooCommerce\Webhooks\WebhookController;

defined( 'ABSPATH' ) || exit;

/**
 * Every hook the plugin adds, in one place.
 */
final class Plugin {

	public const TEXT_DOMAIN = 'servicepay-woocommerce';

	/**
	 * The main plugin file.
	 *
	 * @var string
	 */
	private static string $file = '';

	/**
	 * Hooks that must exist before `plugins_loaded` (HPOS and Blocks compatibility, activation).
	 *
	 * @param string $file The main plugin file.
	 */
	public static function boot( string $file ): void {
		self::$file = $file;
		register_activation_hook( $file, array( SettlementClaim::class, 'install' ) );
		add_action(
			'before_woocommerce_init',
			static function () use ( $file ): void {
				if ( class_exists( \Automattic\WooCommerce\Utilities\FeaturesUtil::class ) ) {
					\Automattic\WooCommerce\Utilities\FeaturesUtil::declare_compatibility( 'custom_order_tables', $file, true );
					\Automattic\WooCommerce\Utilities\FeaturesUtil::declare_compatibility( 'cart_checkout_blocks', $file, true );
				}
			}
		);
		add_action( 'plugins_loaded', array( self::class, 'init' ) );
	}

	/** Everything that needs WooCommerce. */
	public static function init(): void {
		load_plugin_textdomain( self::TEXT_DOMAIN, false, dirname( plugin_basename( self::$file ) ) . '/languages' );
		if ( ! class_exists( \WC_Payment_Gateway::class ) ) {
			add_action(
				'admin_notices',
				static function (): void {
					echo '<div class="notice notice-error"><p>' . esc_html__( 'ServicePay for WooCommerce needs WooCommerce to be installed and active.', 'servicepay-woocommerce' ) . '</p></div>';
				}
			);
			return;
		}
		SettlementClaim::maybe_install();
		add_filter(
			'woocommerce_payment_gateways',
			static function ( array $gateways ): array {
				$gateways[] = Gateway::class;
				return $gateways;
			}
		);
		add_action(
			'woocommerce_blocks_payment_method_type_registration',
			static function ( $registry ): void {
				$registry->register( new Blocks\PaymentMethod() );
			}
		);
		CheckoutController::register();
		WebhookController::register();
		Refunds::register();
		SessionCheck::register();
		add_action( 'template_redirect', array( self::class, 'confirm_on_return' ) );
		add_action( 'woocommerce_before_thankyou', array( Gateway::class, 'explain_order_on_hold' ) );
		add_filter( 'woocommerce_cancel_unpaid_order', array( self::class, 'keep_open_orders' ), 10, 2 );
		add_filter( 'plugin_action_links_' . plugin_basename( self::$file ), array( self::class, 'action_links' ) );
	}

	/**
	 * The payer lands on the order-received page: ask the service before the page is drawn, so a paid order
	 * shows as paid even when the webhook has not arrived yet.
	 */
	public static function confirm_on_return(): void {
		if ( ! function_exists( 'is_order_received_page' ) || ! is_order_received_page() ) {
			return;
		}
		$order_id = absint( get_query_var( 'order-received' ) );
		$order    = $order_id ? wc_get_order( $order_id ) : false;
		$key      = isset( $_GET['key'] ) ? sanitize_text_field( wp_unslash( $_GET['key'] ) ) : ''; // phpcs:ignore WordPress.Security.NonceVerification.Recommended
		if ( $order instanceof \WC_Order && OrderSessions::is_ours( $order ) && $order->needs_payment() && hash_equals( $order->get_order_key(), $key ) ) {
			SessionConfirmer::confirm( $order );
		}
	}

	/**
	 * WooCommerce cancels unpaid orders after its "hold stock" minutes. A bank transfer can take longer: an
	 * order whose session is still open (or turns out paid) is not cancelled. The service is asked, so an order
	 * whose session the payer cancelled or that expired may be cancelled (and its stock freed) as WooCommerce
	 * wants; when the service cannot be asked, the order is kept until its session's end.
	 *
	 * @param bool      $cancel Whether WooCommerce would cancel it.
	 * @param \WC_Order $order  Order.
	 */
	public static function keep_open_orders( $cancel, $order ): bool {
		if ( ! $cancel || ! $order instanceof \WC_Order || ! OrderSessions::is_ours( $order ) || '' === OrderSessions::current( $order ) ) {
			return (bool) $cancel;
		}
		$status = SessionConfirmer::confirm( $order );
		if ( '' === $status ) {
			return time() >= OrderSessions::expires_at( $order );
		}
		return ! in_array( $status, array( 'successful', 'pending', 'awaiting_payment', 'mismatch' ), true );
	}

	/**
	 * A "Settings" link on the Plugins screen.
	 *
	 * @param string[] $links Links.
	 * @return string[]
	 */
	public static function action_links( array $links ): array {
		$url = admin_url( 'admin.php?page=wc-settings&tab=checkout&section=' . Gateway::ID );
		array_unshift( $links, '<a href="' . esc_url( $url ) . '">' . esc_html__( 'Settings', 'servicepay-woocommerce' ) . '</a>' );
		return $links;
	}

	/**
	 * Registers a built script (`build/<name>.js` with its `.asset.php`) and returns its handle.
	 *
	 * @param string $name `blocks` or `classic`.
	 */
	public static function register_script( string $name ): string {
		$handle = 'servicepay-' . $name;
		if ( wp_script_is( $handle, 'registered' ) ) {
			return $handle;
		}
		$dir   = plugin_dir_path( self::$file ) . 'build/';
		$asset = is_file( $dir . $name . '.asset.php' ) ? require $dir . $name . '.asset.php' : array(
			'dependencies' => array(),
			'version'      => SERVICEPAY_WC_VERSION,
		);
		$deps = $asset['dependencies'];
		if ( 'blocks' === $name ) {
			// WooCommerce's globals, which @wordpress/scripts does not know to extract.
			$deps = array_merge( $deps, array( 'wc-blocks-registry', 'wc-settings' ) );
		}
		wp_register_script( $handle, plugins_url( 'build/' . $name . '.js', self::$file ), $deps, $asset['version'], true );
		wp_set_script_translations( $handle, self::TEXT_DOMAIN, plugin_dir_path( self::$file ) . 'languages' );
		return $handle;
	}

	/**
	 * The classic order-pay page's script, with the order it pays.
	 *
	 * @param \WC_Order $order Order.
	 */
	public static function enqueue_classic_script( \WC_Order $order ): void {
		$handle = self::register_script( 'classic' );
		wp_localize_script(
			$handle,
			'servicepayClassic',
			array_merge(
				Gateway::script_data(),
				array(
					'orderId'  => (string) $order->get_id(),
					'orderKey' => $order->get_order_key(),
				)
			)
		);
		wp_enqueue_script( $handle );
	}
}
