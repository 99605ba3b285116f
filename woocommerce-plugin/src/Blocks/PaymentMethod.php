<?php
/**
 * The gateway in the Cart & Checkout Blocks.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Blocks;

use Automattic\WooCommerce\Blocks\Payments\Integrations\AbstractPaymentMethodType;
use ServicePay\WooCommerce\Gateway;
use ServicePay\WooCommerce\Plugin;
use ServicePay\WooCommerce\Settings;

defined( 'ABSPATH' ) || exit;

/**
 * Registers `build/blocks.js`, which opens the widget once the Store API has placed the order.
 */
final class PaymentMethod extends AbstractPaymentMethodType {

	/**
	 * Payment method name (the gateway id).
	 *
	 * @var string
	 */
	protected $name = Gateway::ID;

	/** Reads the settings. */
	public function initialize() {
		$this->settings = get_option( Settings::OPTION, array() );
	}

	/** Offered when the gateway is enabled and has a key. */
	public function is_active() {
		return Settings::load()->is_ready();
	}

	/**
	 * The script handle(s).
	 *
	 * @return string[]
	 */
	public function get_payment_method_script_handles() {
		return array( Plugin::register_script( 'blocks' ) );
	}

	/**
	 * Data for the script (`getSetting( 'servicepay_data' )`).
	 *
	 * @return array<string,mixed>
	 */
	public function get_payment_method_data() {
		$settings = Settings::load();
		return array_merge(
			Gateway::script_data(),
			array(
				'title'       => '' !== $settings->get( 'title' ) ? $settings->get( 'title' ) : __( 'Bank transfer', 'servicepay-woocommerce' ),
				'description' => $settings->get( 'description' ),
				'supports'    => array( 'products' ),
			)
		);
	}
}
