<?php
/**
 * A webhook whose signature did not verify.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Webhooks;

defined( 'ABSPATH' ) || defined( 'SERVICEPAY_TESTING' ) || exit;

/**
 * Thrown by {@see SignatureVerifier::verify()}; `code_name` is stable, the message is for people.
 */
final class SignatureException extends \RuntimeException {

	/**
	 * Stable reason.
	 *
	 * @var string
	 */
	public string $code_name;

	/**
	 * Builds it.
	 *
	 * @param string $code_name Stable reason.
	 * @param string $message   For people.
	 */
	public function __construct( string $code_name, string $message ) {
		parent::__construct( $message );
		$this->code_name = $code_name;
	}
}
